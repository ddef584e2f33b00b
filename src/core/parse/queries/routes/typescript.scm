; Route extraction (src/core/context/routes.ts), for TypeScript, TSX and JavaScript: `app.get('/path', handler)` calls (Express,
; Fastify, Hono, Koa routers) and decorators (NestJS controllers, TypeGraphQL resolvers).
(call_expression
  function: (member_expression property: (property_identifier) @method)
  arguments: (arguments . (string) @path)) @call
(decorator) @decorator
