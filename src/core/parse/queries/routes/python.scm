; Route extraction (src/core/context/routes.ts): every decorated definition; the code reads its
; decorators (FastAPI, Flask, Strawberry, Ariadne).
(decorated_definition) @decorated
