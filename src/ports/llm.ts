// The model router as the gateway's own actions use it (implemented in src/llm/service.ts).

export type LlmTier = 'platform/cheap' | 'platform/mid' | 'platform/best';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One-shot completions used inside actions (scraper extraction, summaries). Their cost is the gateway's own,
 * included in the action's flat price; the caller is not billed per token for them.
 */
export interface LlmService {
  complete(req: {
    tier: LlmTier;
    messages: LlmMessage[];
    /** When set, the answer must be JSON matching this schema; `json` holds it parsed and validated. */
    jsonSchema?: Record<string, unknown>;
    maxTokens?: number;
    signal: AbortSignal;
  }): Promise<{
    text: string;
    json?: unknown;
    model: string;
    usage: { prompt_tokens: number; completion_tokens: number };
    costMicros: number;
  }>;
}
