// OpenAI Chat's media: an answer in audio (`modalities: ["text", "audio"]`), its sound in
// `delta.audio.data` chunks (base64 pcm16, the one format a streamed request may ask for) beside
// its transcript, each chunk media of its own (as Gemini's audio parts are); OpenRouter's images in
// `delta.images` (`data:` URLs). ModelStream has them, whole, at every two-piece split and a byte
// per read; ModelEventReader each event's; past maxMediaBytes a chunk is kept without its data;
// relays write nothing of them (OpenAI's passes the events as they came).
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay, describeFormat } from '../../bindings/index.js';
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
  // (each with the audio's id, said in the first chunk, before them: a later turn sends it back)
  const MEDIA = SOUND.map((data) => ({ mimeType: TYPE, data, bytes: data.length, id: 'audio_1' }));

  it('ModelStream: each chunk media, in order, as sent; the transcript the text', () => {
    expect(streamed(body)).toEqual({ text: PIECES.join(''), status: 'done', media: MEDIA });
  });

  it('past maxMediaBytes a chunk is kept without its data, and the stream goes on', () => {
    const limit = SOUND[0].length + SOUND[1].length;
    expect(streamed(body, limit)).toEqual({ text: PIECES.join(''), status: 'done', media: [MEDIA[0], MEDIA[1], { mimeType: TYPE, data: '', bytes: SOUND[2].length, omitted: true, id: 'audio_1' }] });
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

describe("OpenAI Chat: a whole answer's audio (message.audio), in the format the request asked", () => {
  // (a non-streamed chat.completion's `message.audio` is `{id, data, expires_at, transcript}`: the
  // whole file, base64, in the request's `audio.format`, which the response does not say: its
  // container is read from the decoded bytes' head, pcm16 (no header) only when none fits)
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
  const le32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24];
  const samples = (n: number) => Array.from({ length: n }, (_, i) => (i * 29) & 255);
  // MPEG-2 Layer III, 32 kbit/s at 24 kHz, no padding: 96-byte frames
  const mp3Frame = () => [0xff, 0xf3, 0x44, 0xc4, ...samples(92)];
  // ADTS (MPEG-4 AAC LC, 24 kHz, mono), frames of 20 bytes
  const adtsFrame = () => [0xff, 0xf1, 0x58, 0x40, 0x02, 0x9f, 0xfc, ...samples(13)];
  const FILES: [string, Buffer, string][] = [
    ['wav', bytes('RIFF', le32(36 + 8), 'WAVEfmt ', le32(16), [1, 0, 1, 0], le32(24000), le32(48000), [2, 0, 16, 0], 'data', le32(8), samples(8)), 'audio/wav'],
    ['mp3 with an ID3 tag', bytes('ID3', [4, 0, 0, 0, 0, 0, 0], mp3Frame()), 'audio/mpeg'],
    ['mp3 of bare frames', bytes(mp3Frame(), mp3Frame()), 'audio/mpeg'],
    ['flac', bytes('fLaC', [0x80, 0, 0, 34], samples(34)), 'audio/flac'],
    ['opus (in Ogg)', bytes('OggS', [0, 2], samples(20), 'OpusHead', samples(11)), 'audio/ogg'],
    ['aac (ADTS)', bytes(adtsFrame(), adtsFrame()), 'audio/aac'],
    // raw samples, whose first bytes look like an MPEG frame's header with no frame after it
    ['pcm16', bytes([0xff, 0xf3, 0x44, 0xc4], samples(60)), 'audio/pcm16;rate=24000'],
    ['pcm16 of silence', bytes(new Array(64).fill(0)), 'audio/pcm16;rate=24000'],
  ];
  const answer = (data: string) => JSON.stringify({
    id: 'chatcmpl-w', object: 'chat.completion', created: 1, model: 'gpt-audio',
    choices: [{
      index: 0, message: { role: 'assistant', content: null, refusal: null, annotations: [], audio: { id: 'audio_w1', data, expires_at: 1796600000, transcript: 'Grüezi 🎧.' } },
      finish_reason: 'stop',
    }],
    usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
  }, null, 2);

  for (const [name, file, type] of FILES) {
    it(`${name}: ${type}, with the audio's id and expiry (a follow-up turn sends {audio: {id}} back)`, () => {
      const data = file.toString('base64');
      const body = answer(data);
      const medium = { mimeType: type, data, bytes: data.length, id: 'audio_w1', expiresAt: 1796600000 };
      expect(streamed(body)).toEqual({ text: 'Grüezi 🎧.', status: 'done', media: [medium] });
      // (the events describeFormat writes of it, read one at a time, say the same)
      const events = describeFormat('openai').wholeAnswerEvents(JSON.parse(body))!;
      const r = new ModelEventReader({ format: 'openai' });
      expect(events.flatMap((e) => r.read(e.data).media ?? [])).toEqual([medium]);
    });
  }
});
