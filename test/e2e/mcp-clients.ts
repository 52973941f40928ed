import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// The three kinds of MCP client the door must serve, behind one small interface so each test runs against all
// of them: the v2 SDK negotiating the 2026-07-28 era, the v2 SDK pinned to the 2025 handshake, and the v1 SDK
// (what most hosts ship today).

export type ClientKind = 'v2-modern' | 'v2-legacy' | 'v1';
export const CLIENT_KINDS: readonly ClientKind[] = ['v2-modern', 'v2-legacy', 'v1'];

export interface CallOptions {
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
}

// biome-ignore lint/suspicious/noExplicitAny: results are read loosely in assertions
type Loose = any;

export interface TestClient {
  kind: ClientKind;
  protocolVersion: string | undefined;
  instructions: string | undefined;
  listTools(): Promise<Loose[]>;
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<Loose>;
  listResources(): Promise<Loose[]>;
  readResource(uri: string): Promise<Loose>;
  close(): Promise<void>;
}

export async function connectClient(
  kind: ClientKind,
  baseUrl: string,
  key: string,
  path = '/mcp',
): Promise<TestClient> {
  const url = new URL(`${baseUrl}${path}`);
  const requestInit = { headers: { Authorization: `Bearer ${key}` } };
  const info = { name: `tollgate-test-${kind}`, version: '1.0.0' };
  const params = (name: string, args: Record<string, unknown>, opts?: CallOptions) => ({
    name,
    arguments: args,
    ...(opts?.meta ? { _meta: opts.meta } : {}),
  });
  const requestOptions = (opts?: CallOptions) => ({
    ...(opts?.signal ? { signal: opts.signal } : {}),
    ...(opts?.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
  });

  if (kind === 'v1') {
    const client = new V1Client(info);
    await client.connect(new V1Transport(url, { requestInit }));
    return {
      kind,
      protocolVersion: client.getServerCapabilities() ? '2025 (v1 sdk)' : undefined,
      instructions: client.getInstructions(),
      listTools: async () => (await client.listTools()).tools,
      callTool: (name, args, opts) =>
        client.callTool(params(name, args, opts), undefined, requestOptions(opts)),
      listResources: async () => (await client.listResources()).resources,
      readResource: (uri) => client.readResource({ uri }),
      close: () => client.close(),
    };
  }

  const client = new Client(info, {
    versionNegotiation: { mode: kind === 'v2-modern' ? 'auto' : 'legacy' },
  });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit }));
  return {
    kind,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    instructions: client.getInstructions(),
    listTools: async () => (await client.listTools()).tools,
    callTool: (name, args, opts) => client.callTool(params(name, args, opts), requestOptions(opts)),
    listResources: async () => (await client.listResources()).resources,
    readResource: (uri) => client.readResource({ uri }),
    close: () => client.close(),
  };
}
