export { MonitorMatcher, type MonitorMatch, type MonitorSpec } from './matcher.js';
