// An OpenAI Chat answer in audio (`modalities: ["text", "audio"]`): `content` is null and the
// answer's text comes as `delta.audio.transcript`, beside the audio's base64 `data`. The transcript
// is the answer's text, whatever the reads; a relay to Anthropic's clients writes it as their text
// (they have no audio), and one to OpenAI's passes every event as it came.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';
import { anthropicFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-a', object: 'chat.completion.chunk', created: 1, model: 'gpt-audio', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const AUDIO = Buffer.from(new Uint8Array(600).map((_, i) => (i * 37) & 255)).toString('base64');
const PIECES = ['Grüezi', ', the answer is "42" ', '🎧.'];
const body = chunk({ role: 'assistant', content: null, refusal: null, audio: { id: 'audio_1', transcript: '' } })
  + PIECES.map((t) => chunk({ audio: { transcript: t } }) + chunk({ audio: { data: AUDIO } })).join('')
  + chunk({ audio: { id: 'audio_1', expires_at: 1796600000 } }) + chunk({}, 'stop') + 'data: [DONE]\n\n';
const bytes = enc.encode(body);

describe('an answer in audio', () => {
  for (const raw of [false, true]) {
    it(`ModelStream: the transcript is the text, whatever the reads${raw ? ' (raw)' : ''}`, () => {
      for (const chunks of standardChunkings(bytes)) {
        const m = new ModelStream({ format: 'openai', raw });
        let text = '';
        for (const c of chunks) text += m.push(c);
        text += m.flush();
        expect([text, m.status, m.finishReason], `${chunks.length} reads`).toEqual([PIECES.join(''), 'done', 'stop']);
      }
    });
  }

  it('ModelEventReader: each event its piece', () => {
    const r = new ModelEventReader({ format: 'openai' });
    const got = body.split(/(?<=\n\n)/).map((e) => r.read(e.slice(6, -2)).text).filter((t) => t !== '');
    expect(got).toEqual(PIECES);
  });

  it('relayed to Anthropic: the SDK has the transcript as the text, at every cut; to OpenAI: every event as it came', async () => {
    expect(await sameAtEveryCut(bytes, () => new SseRelay({ from: 'openai', to: 'anthropic' }), async (b) => {
      const msg = await anthropicFinal(b);
      return [msg.content.map((c) => (c.type === 'text' ? c.text : c.type)), msg.stop_reason];
    })).toEqual([[PIECES.join('')], 'end_turn']);
    const r = new SseRelay({ from: 'openai', to: 'openai' });
    expect(new TextDecoder().decode(Buffer.concat([r.push(bytes), r.flush()]))).toBe(body);
  });
});
