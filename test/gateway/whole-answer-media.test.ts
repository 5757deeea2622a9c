// A whole answer (`stream: false`) read from a stream keeps none of the media the stream carries
// (Gemini's inlineData parts: images, audio): the answer written in the client's API has no place
// for them, and ModelStream kept them up to its default of 64 MiB a stream, outside maxResponseBytes
// and the streams' budget. The ModelStreams the gateway makes are watched (what each kept at its end).
import { describe, expect, test, vi } from 'vitest';
import { post, startGateway } from './support.js';

const kept = vi.hoisted(() => [] as { media: number; omitted: number }[]);
vi.mock('seam-stream', async (importOriginal) => {
  const lib = await importOriginal<typeof import('seam-stream')>();
  class WatchedModelStream extends lib.ModelStream {
    override dispose(): void {
      const media = this.media;
      kept.push({ media: media.reduce((n, m) => n + (m.data?.length ?? 0), 0), omitted: media.filter((m) => m.omitted === true).length });
      super.dispose();
    }
  }
  return { ...lib, ModelStream: WatchedModelStream };
});

const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;

describe('a whole answer keeps no media', () => {
  test('a Gemini stream with an image of 256 KiB: the answer\'s text alone, and the image not kept (omitted)', async () => {
    const g = await startGateway({ upstreamFormat: 'gemini' });
    try {
      const image = Buffer.alloc(256 * 1024, 7).toString('base64');
      const body = gem({ candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: image } }], role: 'model' }, index: 0 }] })
        + gem({ candidates: [{ content: { parts: [{ text: 'Voici.' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } });
      g.up.scripts.set('img', { pieces: [Buffer.from(body)] });
      kept.length = 0;
      const r = await post(g.url, { model: 'img', stream: false, messages: [{ role: 'user', content: 'x' }] });
      const answer = JSON.parse(r.body.toString()) as { choices: { message: unknown; finish_reason: string }[] };
      expect([r.status, answer.choices[0].message, answer.choices[0].finish_reason]).toEqual([200, { role: 'assistant', content: 'Voici.' }, 'stop']);
      expect(kept).toEqual([{ media: 0, omitted: 1 }]);
    } finally {
      await g.close();
    }
  });
});
