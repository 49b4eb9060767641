// How a request to another node fails (cluster/node.ts), apart from the node itself: the server
// imports the cluster's NATS side only when it runs as a node.

/** The node does not exist (any more), or left while the request waited. */
export class NodeGone extends Error {}
/** The node did not answer in time, or NATS could not carry the request. */
export class NodeUnreachable extends Error {}
/**
 * This node lost its NATS connection while the request waited: its answer, if any, is lost. The
 * caller may ask again once the connection is back (ClusterNode.whenConnected).
 */
export class ConnectionLost extends NodeUnreachable {}
