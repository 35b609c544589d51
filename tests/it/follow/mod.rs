//! Live following of stores (`agentlog::follow`).

mod wake;
