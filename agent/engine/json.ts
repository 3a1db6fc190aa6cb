// JSON-serialisable values: what checkpoints and handoff data are made of, so the controller
// can persist them verbatim in a ConfigMap without knowing their shape.
export type JsonValue =
  null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };
