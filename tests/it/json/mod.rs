//! The JSON layer (`agentlog::json`).

mod layer;
mod roundtrip;
mod suite;
