// GET /metrics: Prometheus text format. Answered asynchronously (worker loops forward the
// scrape to the main thread), so the response is guarded against the client going away.

import type { TemplatedApp } from 'uWebSockets.js';
import { CONTENT_TYPE } from './node.js';
import { componentLogger } from '../log/index.js';

export function mountMetrics(app: TemplatedApp, scrape: () => Promise<string>): void {
  app.get('/metrics', (res) => {
    let gone = false;
    res.onAborted(() => {
      gone = true;
    });
    const answer = (status: string, type: string, body: string): void => {
      if (gone) return;
      res.cork(() => {
        res.writeStatus(status).writeHeader('Content-Type', type).end(body);
      });
    };
    scrape().then(
      (text) => answer('200 OK', CONTENT_TYPE, text),
      (e: unknown) => {
        componentLogger('metrics').error({ err: e }, 'metrics scrape failed');
        answer('500 Internal Server Error', 'text/plain; charset=utf-8', `metrics scrape failed: ${(e as Error).message}\n`);
      },
    );
  });
}
