export { buildApp } from './app.js';
export { parseJsonBody } from './json-body.js';
