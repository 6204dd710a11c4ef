export { MonitorMatcher, type MonitorMatch, type MonitorSpec } from './matcher.js';
export { parseLastEventId, STREAM_RETRY_MS, streamEvents, type StreamOptions } from './stream.js';
