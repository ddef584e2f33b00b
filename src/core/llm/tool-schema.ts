/** A zod schema as the JSON Schema a model's function definition or a tool list carries. */
import { z } from 'zod';

/** `schema` as JSON Schema, without the `$schema` key tool lists do not take. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}
