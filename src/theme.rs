//! One colour theme for both stores' HTML pages: the OpenHands transcript
//! ([`openhands::html`](crate::openhands::html)) and OC Chat's HTML export
//! ([`occhat::render_html`](crate::occhat::render_html)).
//!
//! Each page has a native theme (the transcript light, OC Chat's export
//! dark, Monokai, as OC Chat shows it); the other one is a stylesheet
//! written after the page's own, overriding its colours only (the layout
//! is the page's). Either way the page loads nothing: the styles are
//! inline.

/// The colours of an HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Theme {
    /// Dark text on white (the OpenHands transcript's own).
    Light,
    /// Light text on a dark ground (OC Chat's export's own, Monokai).
    Dark,
}

impl Theme {
    /// `"light"` or `"dark"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

impl std::str::FromStr for Theme {
    type Err = String;

    /// `light` or `dark` (ASCII case ignored).
    fn from_str(s: &str) -> Result<Theme, String> {
        match s.to_ascii_lowercase().as_str() {
            "light" => Ok(Theme::Light),
            "dark" => Ok(Theme::Dark),
            _ => Err(format!("{s}: not a theme (light or dark)")),
        }
    }
}
