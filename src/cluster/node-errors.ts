// How a request to another node fails (cluster/node.ts), apart from the node itself: the server
// imports the cluster's NATS side only when it runs as a node.

/** The node does not exist (any more), or left while the request waited. */
export class NodeGone extends Error {}
/** The node did not answer in time, or NATS could not carry the request. */
export class NodeUnreachable extends Error {}
