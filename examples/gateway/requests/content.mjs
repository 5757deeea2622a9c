// What every translation reads of the middle form, OpenAI Chat's request: a message's text and
// images, a tool result's parts in their order, a call's arguments, the tools, the model where an
// upstream has it in its path; and the two checks
// of a value that the translations and the parameters make (an object, a value given).
import { RequestError } from './errors.mjs';

export const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value given (null is the APIs' "none given"). */
export const given = (v) => (v === null ? undefined : v);

/**
 * A tool message's mark of a failed result (an Anthropic tool_result's `is_error`, which Chat's tool
 * message has no field for: its content says it in words, after "Error: "), holding the result's
 * content as the client sent it, for an upstream with a word of its own for a failure (Converse's
 * toolResult `status`, for Claude).
 */
export const FAILED = Symbol('failed');

/**
 * A mark of the middle form where an Anthropic client asked for the prompt to be cached up to there
 * (its `cache_control`, as sent), which Chat has no word for, for an upstream with a word of its own
 * (Converse's cachePoint block): on a message, the prompt up to its end (its last block marked, or
 * one inside it: a result's whole content, where a mark inside a tool result is); on a tool's
 * function, the tools up to it.
 */
export const CACHE = Symbol('cache');

/** A message's content as text: a string, or the text of its parts. */
export function textOf(c) {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  let s = '';
  for (const p of c) s += typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : '';
  return s;
}

/** The request's model, for an upstream that has it in its path: a RequestError (`missing`) where it names none. */
export function modelOf(body, missing) {
  if (typeof body.model !== 'string' || body.model === '') throw new RequestError(missing);
  return body.model;
}

/**
 * A model's name (the client's) as it goes in the upstream's URL path, percent-encoded: one
 * segment, or with `split` a segment per `/` (Gemini's `models/NAME`, `tunedModels/NAME`). A
 * segment `.` or `..` is refused: the upstream's server reads it as a step in the path (RFC 3986's
 * dot segments), and the client's model would name another path of the upstream's host, out of the
 * base URL's own path too, with the gateway's key.
 */
export function modelInPath(name, split = false) {
  const segments = split ? name.split('/') : [name];
  if (segments.some((x) => x === '.' || x === '..')) {
    throw new RequestError('model: a name with a "." or ".." segment, which the upstream\'s URL path would read as a step in the path', 'model');
  }
  return segments.map(encodeURIComponent).join('/');
}

/** A data URL's media type and base64 payload, or undefined. */
export function dataUrl(url) {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : undefined;
}

/**
 * Chat content parts: the images among them, each `{ url, detail }` (`detail` as the client gave
 * it, else undefined), and whether anything but text and images is there.
 */
export function imagesIn(content) {
  const out = [];
  if (!Array.isArray(content)) return out;
  for (const p of content) {
    if (p?.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
      if (typeof url !== 'string') throw new RequestError('an image_url part without a url');
      out.push({ url, detail: given(p.image_url?.detail) });
    } else if (p?.type !== 'text' && typeof p !== 'string') {
      throw new RequestError(`a content part of type ${JSON.stringify(p?.type)} cannot be carried to this upstream`);
    }
  }
  return out;
}

/** Chat content parts: the images among them (as URLs), for an upstream with no word for an image's detail (urlOf). */
export function imagesOf(content) {
  return imagesIn(content).map(urlOf);
}

/**
 * A message's content as an upstream's parts: its text (where it has any) as `{ text }`, then its
 * images, each in the upstream's words (`image({ url, detail })`): Gemini's parts, Converse's
 * content blocks.
 */
export function textThenImages(content, image) {
  const text = textOf(content);
  return [...(text !== '' ? [{ text }] : []), ...imagesIn(content).map(image)];
}

/**
 * An image's URL, for an upstream that has no word for its `detail` (OpenAI's: how finely the
 * model sees it, `low` at a small size for a fixed few tokens, `high` in detail for more,
 * `original` at its own size, not scaled down): every upstream but Responses and Gemini (whose
 * media resolution says `low`: upstreams/gemini.mjs), each of which sees an image in detail,
 * scaled down only past a size of its own. `auto`, the API's default, leaves
 * it to the upstream, as no detail does, and `high` asks for what such an upstream does: both
 * pass. `low` and `original` ask for what it cannot be told (the model would see the image more
 * coarsely or more finely than asked, billed otherwise): refused.
 */
export function urlOf(image) {
  if (image.detail !== undefined && image.detail !== 'auto' && image.detail !== 'high') {
    throw new RequestError(`an image's detail ${JSON.stringify(image.detail)} cannot be carried to this upstream: it has no word for it, and sees each image in detail, scaled down only past a size of its own (send "high", "auto", or no detail)`);
  }
  return image.url;
}

/**
 * A tool result's content with images among it, each part in an upstream's words (`image({ url,
 * detail })`, `text(text)`) in their order; undefined when it has no image (its text alone is the
 * content).
 */
export function withImages(content, image, text) {
  const parts = partsOf(content);
  return parts.some((p) => p.image !== undefined) ? parts.map((p) => (p.image !== undefined ? image(p.image) : text(p.text))) : undefined;
}

/** Content parts in their order, text and images (each `{ url, detail }`): a string is one text; text that is empty is left out. */
export function partsOf(content) {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const images = imagesIn(content); // (refuses what is neither)
  let i = 0;
  const out = [];
  for (const p of Array.isArray(content) ? content : []) {
    if (p?.type === 'image_url') out.push({ image: images[i++] });
    else {
      const text = typeof p === 'string' ? p : p.text;
      if (typeof text === 'string' && text !== '') out.push({ text });
    }
  }
  return out;
}

/**
 * The text that comes before a tool result's images where the upstream takes them only outside the
 * result (after the results, in a user turn: OpenAI Chat's, Gemini's), naming the call they came from.
 */
export function resultImagesLabel(id, name, n) {
  return `${n === 1 ? 'The image' : `The ${n} images`} from the result of tool call ${id}${typeof name === 'string' ? ` (${name})` : ''}:`;
}

/** A tool call's arguments (JSON text) as the object a format that wants one sends. */
export function argumentsObject(call) {
  const text = call?.function?.arguments;
  if (text === undefined || text === '') return {};
  let v;
  try { v = JSON.parse(text); } catch { v = undefined; }
  if (!isObject(v)) throw new RequestError(`the arguments of tool call ${JSON.stringify(call.id ?? '')} are not a JSON object`);
  return v;
}

export function toolsOf(body) {
  if (given(body.tools) === undefined) return []; // (null: none, as a client that writes every field says it)
  if (!Array.isArray(body.tools)) throw new RequestError('tools must be an array');
  return body.tools.map((t) => {
    if (t?.type !== 'function' || !isObject(t.function) || typeof t.function.name !== 'string') {
      throw new RequestError('each tool must be { type: "function", function: { name, description?, parameters? } }');
    }
    return t.function;
  });
}
