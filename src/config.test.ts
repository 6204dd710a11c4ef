import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('config', () => {
  it('has documented defaults', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.gatewayHost).toBeUndefined();
    expect(c.matchMaxMatches).toBe(10_000);
  });

  it('reads the environment, and a flag wins over it', () => {
    const c = loadConfig({ PORT: '9000', GATEWAY_HOST: 'gw.example' }, { PORT: '9001' });
    expect(c.port).toBe(9001);
    expect(c.gatewayHost).toBe('gw.example');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['MATCH_MAX_MATCHES', '0'],
    ['LOG_LEVEL', 'loud'],
    ['INDEX_LISTS', '1.5'],
    ['INDEX_PROBE_DELTA', 'wide'],
    ['INDEX_FAR_SCORE', '2'],
    ['MODEL_HUB_URL', 'ftp://hub.example'],
    ['MODEL_HUB_REPO', 'bge-m3'],
    ['MODEL_HUB_REVISION', '../main'],
    ['CLUSTER_NATS_URLS', 'http://10.0.0.1:4222'],
    ['CLUSTER_NATS_URLS', 'nats://10.0.0.1:4222,'],
    ['CLUSTER_NATS_URLS', 'nats://'],
    ['CLUSTER_NODE_ID', 'node.1'],
    ['CLUSTER_NODE_ID', 'x'.repeat(65)],
  ])('rejects %s=%s naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('cluster mode: the NATS URLs (credentials never repeated in an error) and a node id it needs', () => {
    const c = loadConfig({ CLUSTER_NATS_URLS: 'nats://10.0.0.1:4222, tls://user:pw@10.0.0.2:4222', CLUSTER_NODE_ID: 'node_1' });
    expect(c.clusterNatsUrls).toEqual(['nats://10.0.0.1:4222', 'tls://user:pw@10.0.0.2:4222']);
    expect(c.clusterNodeId).toBe('node_1');
    expect(loadConfig({}).clusterNatsUrls).toEqual([]);
    expect(() => loadConfig({ CLUSTER_NATS_URLS: 'nats://10.0.0.1:4222' })).toThrow('CLUSTER_NATS_URLS needs CLUSTER_NODE_ID');
    expect(() => loadConfig({ CLUSTER_NATS_URLS: 'https://user:s3cret@x' })).toThrow(ConfigError);
    expect(() => loadConfig({ CLUSTER_NATS_URLS: 'https://user:s3cret@x' })).not.toThrow('s3cret');
  });
});
