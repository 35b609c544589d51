//! Conversions into Agent Session Format.

mod openhands;
