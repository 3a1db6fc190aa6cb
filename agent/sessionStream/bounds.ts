// The session endpoint's memory bounds (README "Trust boundaries"). Anyone who can reach the
// agent's port may open connections and send bytes before proving a secret, and an
// authenticated client may read slowly; none of that may grow the agent past its memory limit,
// which it shares with the pump that feeds the cluster app.
export const SESSION_BOUNDS = {
  /** Bytes a connection may send before its hello is authenticated (a hello carrying its full
   * unsettled list is far smaller); beyond this the socket is cut. */
  preAuthBytes: 256 * 1024,
  /** Connections not yet authenticated at once; further upgrades get 503 until one ends. */
  maxPreAuth: 16,
  /** Session connections at once, authenticated or not (one stream per route is served). */
  maxConnections: 64,
  /** Bytes sent and not yet acked, per stream. This also bounds what the WebSocket buffers for
   * a slow reader (buffered ⊆ unacked). A message larger than this still goes, alone. */
  maxUnackedBytes: 16 * 1024 * 1024,
  /** After a refusal, how long the peer has to answer the close before the socket is cut. */
  closeGraceMs: 1_000,
} as const;

/** What the whole HTTP server (probes, metrics, sessions) allows, so idle sockets cannot pile up. */
export const HTTP_BOUNDS = {
  maxConnections: 128,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
} as const;
