//! The I-JSON normalisation the appender applies to a body before it
//! canonicalises it: a whole number binary64 cannot hold exactly is
//! rounded to the nearest binary64, and where it was is recorded.

use crate::asf::canon::{self, CanonError};
use crate::json::{Number, OwnedValue};

use super::WriteError;

/// Rounds whole numbers the I-JSON test rejects to binary64 (recording
/// each as `{at, was}`, `at` a JSON Pointer); refuses what no rewrite
/// reaches.
pub(super) fn normalise(
    v: &mut OwnedValue,
    at: &mut String,
    out: &mut Vec<(String, String)>,
) -> Result<(), WriteError> {
    match v {
        OwnedValue::Number(n) => match canon::check_number(n.as_str()) {
            Ok(_) => {}
            Err(CanonError::InexactInteger(t)) => {
                let f: f64 = t.parse().unwrap_or(f64::NAN);
                let mut buf = ryu_js::Buffer::new();
                *n = Number::from_text(buf.format_finite(f));
                out.push((at.clone(), t));
            }
            Err(e) => return Err(WriteError::NotIJson(e)),
        },
        OwnedValue::Array(a) => {
            for (i, e) in a.iter_mut().enumerate() {
                let len = at.len();
                at.push('/');
                {
                    use std::fmt::Write as _;
                    let _ = write!(at, "{i}");
                }
                normalise(e, at, out)?;
                at.truncate(len);
            }
        }
        OwnedValue::Object(m) => {
            for (k, e) in m.entries_mut().iter_mut() {
                let len = at.len();
                at.push('/');
                if k.contains(['~', '/']) {
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                } else {
                    at.push_str(k);
                }
                normalise(e, at, out)?;
                at.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}
