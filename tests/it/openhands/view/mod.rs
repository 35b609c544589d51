//! The view (`agentlog::openhands::view`): what the model saw.

mod props;
mod rules;
mod sdk_oracles;
