; Route extraction (src/core/context/routes.ts): Spring's mapping annotations on methods and
; classes.
(annotation name: (identifier) @name) @annotation
