//! Conversions into Agent Session Format.

mod openhands;
mod openhands_calls;
