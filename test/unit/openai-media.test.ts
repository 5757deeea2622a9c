// OpenAI Chat's media: an answer in audio (`modalities: ["text", "audio"]`), its sound in
// `delta.audio.data` chunks (base64 pcm16, the one format a streamed request may ask for) beside
// its transcript, each chunk media of its own (as Gemini's audio parts are); OpenRouter's images in
// `delta.images` (`data:` URLs). ModelStream has them, whole, at every two-piece split and a byte
// per read; ModelEventReader each event's; past maxMediaBytes a chunk is kept without its data;
// relays write nothing of them (OpenAI's passes the events as they came).
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const chunk = (delta: unknown, finish: string | null = null, model = 'gpt-audio') =>
  `data: ${JSON.stringify({ id: 'chatcmpl-a', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** What a stream has of `body` at every standard chunking (each the same): its text, status and media. */
function streamed(body: string, maxMediaBytes?: number) {
  const bytes = enc.encode(body);
  let first: unknown;
  let runs = 0;
  for (const chunks of standardChunkings(bytes)) {
    const m = new ModelStream({ format: 'openai', maxMediaBytes });
    let text = '';
    for (const c of chunks) text += m.push(c);
    text += m.flush();
    const got = { text, status: m.status, media: m.finish().media };
    if (first === undefined) first = got;
    else expect(got, `${chunks.length} reads`).toEqual(first);
    runs++;
  }
  expect(runs).toBe(bytes.length + 3);
  return first;
}

/** Each event's media as ModelEventReader reads it (undefined when none). */
const byEvent = (body: string) => {
  const r = new ModelEventReader({ format: 'openai' });
  return body.split(/(?<=\n\n)/).map((e) => r.read(e.slice(6, -2)).media);
};

describe("OpenAI Chat: an answer's audio (delta.audio.data)", () => {
  const sound = (n: number, k: number) => Buffer.from(new Uint8Array(n).map((_, i) => (i * k) & 255)).toString('base64');
  const SOUND = [sound(600, 37), sound(48, 11), sound(300, 5)];
  const PIECES = ['Grüezi', ', the answer is "42" ', '🎧.'];
  const body = chunk({ role: 'assistant', content: null, refusal: null, audio: { id: 'audio_1', transcript: '' } })
    + PIECES.map((t, i) => chunk({ audio: { transcript: t } }) + chunk({ audio: { data: SOUND[i] } })).join('')
    + chunk({ audio: { id: 'audio_1', expires_at: 1796600000 } }) + chunk({}, 'stop') + 'data: [DONE]\n\n';
  const TYPE = 'audio/pcm16;rate=24000';
  const MEDIA = SOUND.map((data) => ({ mimeType: TYPE, data, bytes: data.length }));

  it('ModelStream: each chunk media, in order, as sent; the transcript the text', () => {
    expect(streamed(body)).toEqual({ text: PIECES.join(''), status: 'done', media: MEDIA });
  });

  it('past maxMediaBytes a chunk is kept without its data, and the stream goes on', () => {
    const limit = SOUND[0].length + SOUND[1].length;
    expect(streamed(body, limit)).toEqual({ text: PIECES.join(''), status: 'done', media: [MEDIA[0], MEDIA[1], { mimeType: TYPE, data: '', bytes: SOUND[2].length, omitted: true }] });
  });

  it('ModelEventReader: each event its chunk', () => {
    expect(byEvent(body)).toEqual([undefined, undefined, [MEDIA[0]], undefined, [MEDIA[1]], undefined, [MEDIA[2]], undefined, undefined, undefined]);
  });

  it('relays: to OpenAI every event as it came; to Anthropic the transcript alone', () => {
    const bytes = enc.encode(body);
    const o = new SseRelay({ from: 'openai', to: 'openai' });
    expect(dec.decode(Buffer.concat([o.push(bytes), o.flush()]))).toBe(body);
    const a = new SseRelay({ from: 'openai', to: 'anthropic', id: 'msg_1', model: 'm' });
    const out = dec.decode(Buffer.concat([a.push(bytes), a.flush()]));
    expect(out).not.toContain(SOUND[0].slice(0, 40));
    expect(out).toContain('"text_delta","text":"Grüezi"');
  });
});

describe("OpenRouter: an answer's images (delta.images)", () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const JPEG = '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//';
  const image = (url: string) => ({ type: 'image_url', image_url: { url }, index: 0 });
  const body = chunk({ role: 'assistant', content: 'Here it is: ' }, null, 'google/gemini-2.5-flash-image')
    + chunk({ role: 'assistant', content: '', images: [image(`data:image/png;base64,${PNG}`), image(`data:image/jpeg;base64,${JPEG}`)] }, null, 'google/gemini-2.5-flash-image')
    // (not base64 data: not read; an address: the media's uri)
    + chunk({ role: 'assistant', content: 'Done.', images: [image('data:image/svg+xml,%3Csvg%2F%3E'), image('https://x.test/cat.webp')] }, null, 'google/gemini-2.5-flash-image')
    + chunk({}, 'stop', 'google/gemini-2.5-flash-image') + 'data: [DONE]\n\n';
  const MEDIA = [
    { mimeType: 'image/png', data: PNG, bytes: PNG.length }, { mimeType: 'image/jpeg', data: JPEG, bytes: JPEG.length },
    { mimeType: '', data: '', bytes: 23, uri: 'https://x.test/cat.webp' },
  ];

  it('ModelStream: each image media, its type from its URL, its base64 data as sent', () => {
    expect(streamed(body)).toEqual({ text: 'Here it is: Done.', status: 'done', media: MEDIA });
  });

  it('an escaped URL (`\\/`) is the same image', () => {
    const escaped = body.replaceAll('/', '\\/');
    expect(escaped).toContain('image\\/png');
    expect(streamed(escaped)).toEqual({ text: 'Here it is: Done.', status: 'done', media: MEDIA });
  });

  it('past maxMediaBytes an image is kept without its data', () => {
    expect(streamed(body, PNG.length)).toEqual({ text: 'Here it is: Done.', status: 'done', media: [MEDIA[0], { mimeType: 'image/jpeg', data: '', bytes: JPEG.length, omitted: true }, { mimeType: '', data: '', bytes: 23, omitted: true }] });
  });

  it('ModelEventReader: the images of their event', () => {
    expect(byEvent(body)).toEqual([undefined, MEDIA.slice(0, 2), [MEDIA[2]], undefined, undefined]);
  });
});
