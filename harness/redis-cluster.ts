import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freeLoopbackPort, spawnRedisServer, stopRedisServer } from '../src/redis/local-redis-server.ts';

const run = promisify(execFile);

/**
 * A private Redis Cluster for one test file: six redis-server processes on free loopback ports
 * (three masters, three replicas), each in its own temp dir with AOF on, created with
 * `redis-cli --cluster create … --cluster-replicas 1`. A node that stops answering for
 * `nodeTimeout` ms is failed over to its replica.
 */
export interface TestCluster {
  /** Every node as "127.0.0.1:port", for redis.cluster. */
  readonly seeds: string[];
  /** The port of the master that serves `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILL that master (a crash) and resolve once its replica serves the slot and the cluster is ok. */
  killMaster(port: number): Promise<{ promoted: number }>;
  /** Resolves once every live node says cluster_state:ok. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface TestClusterOptions {
  /** cluster-node-timeout in ms: how long a silent master stands before its replica takes over; default 2000. */
  nodeTimeout?: number;
}

interface ClusterNode {
  port: number;
  dir: string;
  child: ChildProcess | undefined;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` every 100 ms until it holds; fail naming `what` after `limitMs`. */
async function until(what: string, check: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`test cluster: ${what} within ${limitMs} ms`);
    await pause(100);
  }
}

/** One command to one node over a short-lived connection. */
async function ask(port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const [command = '', ...rest] = args;
    return await client.call(command, ...rest);
  } finally {
    client.disconnect();
  }
}

export async function startCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const nodeTimeout = options.nodeTimeout ?? 2000;
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < 6; i++) {
    nodes.push({
      port: await freeLoopbackPort(),
      dir: await mkdtemp(join(tmpdir(), 'ingest-cluster-')),
      child: undefined,
    });
  }
  // The cluster bus needs a port of its own; the default (port + 10000) may not exist.
  const busPorts = await Promise.all(nodes.map(() => freeLoopbackPort()));
  const close = async () => {
    for (const node of nodes) if (node.child) await stopRedisServer(node.child, 'SIGKILL');
    await Promise.all(nodes.map((node) => rm(node.dir, { recursive: true, force: true })));
  };
  try {
    await Promise.all(
      nodes.map(async (node, i) => {
        node.child = await spawnRedisServer([
          '--port',
          String(node.port),
          '--cluster-port',
          String(busPorts[i]),
          '--bind',
          '127.0.0.1',
          '--dir',
          node.dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(nodeTimeout),
          // A replica may take over however long it was cut off: the test kills masters on purpose.
          '--cluster-replica-validity-factor',
          '0',
          '--appendonly',
          'yes',
          '--save',
          '',
          '--maxmemory-policy',
          'noeviction',
        ]);
      }),
    );
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
  } catch (err) {
    await close();
    throw err;
  }

  const live = () => nodes.filter((node) => node.child !== undefined);
  const settled = () =>
    until('every node says cluster_state:ok', async () => {
      const states = await Promise.all(live().map((node) => ask(node.port, 'CLUSTER', 'INFO')));
      return states.every((info) => String(info).includes('cluster_state:ok'));
    });
  try {
    await settled();
    // Every replica has its master's data, so a failover loses nothing the test wrote.
    await until('every replica is in sync', async () => {
      const roles = await Promise.all(nodes.map((node) => ask(node.port, 'ROLE')));
      const replicas = roles.filter((role) => Array.isArray(role) && role[0] === 'slave');
      return (
        replicas.length === 3 && replicas.every((role) => Array.isArray(role) && role[3] === 'connected')
      );
    });
  } catch (err) {
    await close();
    throw err;
  }

  async function masterOf(key: string): Promise<number> {
    const [first] = live();
    if (!first) throw new Error('test cluster: no node is running');
    const slot = Number(await ask(first.port, 'CLUSTER', 'KEYSLOT', key));
    const ranges = (await ask(first.port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const range = ranges.find(([from, to]) => from <= slot && slot <= to);
    if (!range) throw new Error(`test cluster: slot ${slot} has no master`);
    return range[2][1];
  }

  return {
    seeds: nodes.map((node) => `127.0.0.1:${node.port}`),
    masterOf,
    async killMaster(port) {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node?.child) throw new Error(`test cluster: no running node on port ${port}`);
      const replicaPort = await replicaOf(port, live());
      await stopRedisServer(node.child, 'SIGKILL');
      node.child = undefined;
      await until('the replica took over', async () => {
        const role = await ask(replicaPort, 'ROLE');
        return Array.isArray(role) && role[0] === 'master';
      });
      await settled();
      return { promoted: replicaPort };
    },
    settled,
    close,
  };
}

/** The port of the replica that follows the master on `port`. */
async function replicaOf(port: number, nodes: readonly ClusterNode[]): Promise<number> {
  for (const node of nodes) {
    const role = await ask(node.port, 'ROLE');
    if (Array.isArray(role) && role[0] === 'slave' && Number(role[2]) === port) return node.port;
  }
  throw new Error(`test cluster: the master on ${port} has no replica`);
}
