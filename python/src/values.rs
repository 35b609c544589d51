//! JSON values as Python values, as `json.loads` gives them: objects as
//! `dict` (members in order; of a repeated name the last value, at the
//! first one's place), arrays as `list`, integers as `int` (every digit,
//! beyond 64 bits too), other numbers as `float`.

use agentlog::json::{JsonType, OwnedValue, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Whether a number's JSON text is an integer literal.
fn is_integer_text(raw: &str) -> bool {
    !raw.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
        && !raw.contains("NaN")
        && !raw.contains("Infinity")
}

fn number<'py>(py: Python<'py>, raw: &str, as_f64: f64) -> PyResult<Bound<'py, PyAny>> {
    let raw = raw.trim();
    if is_integer_text(raw) {
        if let Ok(v) = raw.parse::<i64>() {
            return Ok(v.into_pyobject(py)?.into_any());
        }
        // Beyond 64 bits: Python's int takes every digit.
        if let Ok(v) = py.get_type::<pyo3::types::PyInt>().call1((raw,)) {
            return Ok(v);
        }
    }
    Ok(as_f64.into_pyobject(py)?.into_any())
}

/// A value on the tape as a Python value.
pub fn tape_to_py<'py>(py: Python<'py>, v: Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v.json_type() {
        JsonType::Null => py.None().into_bound(py),
        JsonType::Bool => v
            .as_bool()
            .unwrap_or(false)
            .into_pyobject(py)?
            .to_owned()
            .into_any(),
        JsonType::Number => number(py, v.raw_str(), v.as_f64().unwrap_or(f64::NAN))?,
        JsonType::String => v.as_str().unwrap_or("").into_pyobject(py)?.into_any(),
        JsonType::Array => {
            let list = PyList::empty(py);
            if let Some(a) = v.as_array() {
                for e in a.iter() {
                    list.append(tape_to_py(py, e)?)?;
                }
            }
            list.into_any()
        }
        JsonType::Object => {
            let dict = PyDict::new(py);
            if let Some(o) = v.as_object() {
                for m in o.iter() {
                    dict.set_item(m.key, tape_to_py(py, m.value)?)?;
                }
            }
            dict.into_any()
        }
    })
}

/// An owned value as a Python value.
pub fn owned_to_py<'py>(py: Python<'py>, v: &OwnedValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        OwnedValue::Null => py.None().into_bound(py),
        OwnedValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        OwnedValue::Number(n) => number(py, n.as_str(), n.as_f64())?,
        OwnedValue::String(s) => s.into_pyobject(py)?.into_any(),
        OwnedValue::Array(a) => {
            let list = PyList::empty(py);
            for e in a {
                list.append(owned_to_py(py, e)?)?;
            }
            list.into_any()
        }
        OwnedValue::Object(m) => {
            let dict = PyDict::new(py);
            for (k, e) in m.iter() {
                dict.set_item(k, owned_to_py(py, e)?)?;
            }
            dict.into_any()
        }
    })
}
