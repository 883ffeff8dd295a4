// Turns the JSON Schema the library publishes for a tool into the zod raw
// shape an OpenCode tool definition takes. Only the small subset the library
// uses is understood; anything else is an error, so a library change shows up
// at load time rather than as a silently wrong schema.

import type { z } from "zod"

type Zod = typeof z
type JsonSchema = {
  type?: string | string[]
  description?: string
  enum?: unknown[]
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
}

export function zodShapeFromJsonSchema(zod: Zod, schema: unknown): Record<string, z.ZodType> {
  const root = asSchema(schema, "input_schema")
  if (root.type !== undefined && root.type !== "object") {
    throw new Error(`herdr-link: tool input_schema must be an object schema, got ${JSON.stringify(root.type)}`)
  }
  return objectShape(zod, root, "input_schema")
}

function objectShape(zod: Zod, schema: JsonSchema, where: string): Record<string, z.ZodType> {
  const required = new Set(schema.required ?? [])
  const shape: Record<string, z.ZodType> = {}
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    let field = convert(zod, asSchema(prop, `${where}.${key}`), `${where}.${key}`)
    if (!required.has(key)) field = field.optional()
    shape[key] = field
  }
  return shape
}

function convert(zod: Zod, schema: JsonSchema, where: string): z.ZodType {
  let out: z.ZodType
  if (schema.enum !== undefined) {
    const values = schema.enum
    if (values.length === 0 || !values.every((v): v is string => typeof v === "string")) {
      throw new Error(`herdr-link: ${where}: only non-empty string enums are supported`)
    }
    out = zod.enum(values as [string, ...string[]])
  } else {
    switch (schema.type) {
      case "string":
        out = zod.string()
        break
      case "boolean":
        out = zod.boolean()
        break
      case "number":
        out = zod.number()
        break
      case "integer":
        out = zod.number().int()
        break
      case "array": {
        if (!schema.items) throw new Error(`herdr-link: ${where}: array without items`)
        out = zod.array(convert(zod, asSchema(schema.items, `${where}[]`), `${where}[]`))
        break
      }
      case "object":
        out = schema.properties
          ? zod.object(objectShape(zod, schema, where))
          : zod.record(zod.string(), zod.unknown())
        break
      default:
        throw new Error(`herdr-link: ${where}: unsupported schema type ${JSON.stringify(schema.type)}`)
    }
  }
  if (typeof schema.description === "string" && schema.description !== "") {
    out = out.describe(schema.description)
  }
  return out
}

function asSchema(value: unknown, where: string): JsonSchema {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`herdr-link: ${where}: not a JSON Schema object`)
  }
  return value as JsonSchema
}
