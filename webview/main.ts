import { Channel } from '../src/protocol/channel';
import type { HostNotification, HostRequests, WebviewNotification, WebviewRequests } from '../src/protocol/messages';
import { InspectorApp } from './inspector/inspectorApp';

/** The object VS Code injects into webviews; callable once per page. */
interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState<T>(state: T): T;
}

declare const acquireVsCodeApi: () => VsCodeApi;

const vscodeApi = acquireVsCodeApi();
const channel = new Channel<WebviewNotification, HostNotification, WebviewRequests, HostRequests>(
  (m) => vscodeApi.postMessage(m),
  {
    onError: (message) =>
      vscodeApi.postMessage({ type: 'log/error', message: `channel: ${message}` } satisfies WebviewNotification),
  },
);

const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('main'));
const app = new InspectorApp(root, {
  notify: (message) => channel.notify(message),
  request: (method, params, options) => channel.request(method, params as never, options) as never,
  getState: () => vscodeApi.getState(),
  setState: (state) => vscodeApi.setState(state),
});

channel.onNotification((message) => app.handle(message));
channel.onRequest('whatif/current', () => app.whatIfDocument());
window.addEventListener('message', (event: MessageEvent<unknown>) => channel.receive(event.data));
window.addEventListener('error', (event) => app.reportError('script error', event.error ?? event.message));
window.addEventListener('unhandledrejection', (event) => app.reportError('unhandled promise', event.reason));

// Only now is anyone listening; the host answers with `init`.
channel.notify({ type: 'ready' });
