// A Bedrock request the gateway cannot sign (AWS's signer failed to load, or threw) is the
// gateway's own failure, before any connection: a 500 in the client's shape with the request id,
// the detail in the log, counted in gateway_errors_total and as a failed stream, and not as the
// provider's error (llm_provider_errors_total{source="connect"} is for an upstream that could not
// be reached). AWS's signer is replaced here, in this file alone, by one that throws.
import { afterAll, describe, expect, test, vi } from 'vitest';
import { chat, closeGateway, metricsAt, post, startGateway, withAwsEnv, type Running } from './support.js';

vi.doMock('@smithy/signature-v4', () => ({
  SignatureV4: class {
    sign(): Promise<never> {
      return Promise.reject(new Error('the signer is broken'));
    }
  },
}));
afterAll(() => {
  vi.doUnmock('@smithy/signature-v4');
});

describe('a bedrock request the gateway cannot sign', () => {
  withAwsEnv();
  let g: Running | undefined;
  afterAll(async () => {
    await closeGateway(g);
  });

  test.each(['openai', 'anthropic'] as const)('to an %s client: a 500, the gateway\'s error, not the provider\'s; the upstream is not called', async (client) => {
    g ??= await startGateway({ upstreamFormat: 'bedrock' });
    const res = client === 'openai' ? await post(g.url, chat('probe', false)) : await post(g.url, { ...chat('probe'), max_tokens: 9 }, '/v1/messages');
    const id = res.headers['x-request-id'] as string;
    const message = `gateway error (request id ${id}; the gateway's log has the detail)`;
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([500,
      client === 'openai' ? { error: { message, type: 'gateway_error', code: 'ERR_GATEWAY' } } : { type: 'error', error: { type: 'api_error', message } }]);
    expect(g.log.at(-1)).toMatch(new RegExp(`^gateway: request ${id}: 500: Error: the signer is broken\\n`));
    expect(g.up.received.length).toBe(0);
  });

  test('the metrics: two gateway errors, two failed streams, no provider error', async () => {
    const m = await metricsAt(`${g!.url}/metrics`);
    expect(Object.fromEntries([...m].filter(([k]) => /^(gateway_errors_total|llm_streams_total|llm_provider_errors_total)/.test(k)))).toEqual({
      gateway_errors_total: 2,
      'llm_streams_total{status="done"}': 0, 'llm_streams_total{status="truncated"}': 0, 'llm_streams_total{status="failed"}': 2,
      'llm_streams_total{status="limit"}': 0, 'llm_streams_total{status="aborted"}': 0,
      'llm_provider_errors_total{source="status"}': 0, 'llm_provider_errors_total{source="stream"}': 0,
      'llm_provider_errors_total{source="connect"}': 0, 'llm_provider_errors_total{source="body"}': 0,
    });
  });
});
