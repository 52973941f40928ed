import type * as Undici from 'undici';

// undici is the HTTP client of every upstream, and about 5 MiB of heap once loaded: a gateway that has not yet
// called an upstream need not hold it (issue 19, idle RSS). It loads on the first request through any pool; from
// then on a request goes straight to the loaded module, without a promise tick on the call's path.

export type ResponseData = Undici.Dispatcher.ResponseData;
export type HttpMethod = Undici.Dispatcher.HttpMethod;
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: HttpMethod;
};
export type PoolOptions = Undici.Agent.Options;

let undici: typeof Undici | undefined;
let loading: Promise<typeof Undici> | undefined;

function load(): Promise<typeof Undici> {
  loading ??= import('undici').then((m) => {
    undici = m;
    return m;
  });
  return loading;
}

/** An undici Agent (a connection pool per origin) made on its first request. */
export class UpstreamPool {
  #agent: Undici.Agent | undefined;

  constructor(private readonly options: PoolOptions) {}

  request(url: string | URL, opts: RequestOptions): Promise<ResponseData> {
    const u = undici;
    if (u === undefined) return load().then(() => this.request(url, opts));
    this.#agent ??= new u.Agent(this.options);
    return u.request(url, { ...opts, dispatcher: this.#agent });
  }

  async close(): Promise<void> {
    await this.#agent?.close();
  }
}

/** undici's header and body timeouts, told by their codes (no loaded module needed to check). */
export function isUndiciTimeout(e: unknown): boolean {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}
