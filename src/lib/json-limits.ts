// A parsed JSON body is checked before validation: deep nesting and huge arrays are refused with a clear
// 4xx instead of reaching recursive validators (stack overflow) or quadratic work.

export interface JsonLimits {
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 32, maxElements: 50_000 };

export type JsonLimitViolation = { kind: 'depth'; limit: number } | { kind: 'elements'; limit: number };

/** Iterative walk (no recursion, so hostile depth cannot overflow the stack). */
export function checkJsonLimits(
  value: unknown,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): JsonLimitViolation | null {
  if (value === null || typeof value !== 'object') return null;
  const stack: Array<[unknown, number]> = [[value, 1]];
  let elements = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (depth > limits.maxDepth) return { kind: 'depth', limit: limits.maxDepth };
    const children = Array.isArray(node) ? node : Object.values(node as object);
    elements += children.length;
    if (elements > limits.maxElements) return { kind: 'elements', limit: limits.maxElements };
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return null;
}
