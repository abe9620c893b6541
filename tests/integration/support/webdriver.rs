//! A real browser for the web view's tests: Debian's headless Chromium driven by its
//! ChromeDriver over the W3C WebDriver protocol (plain JSON over HTTP on 127.0.0.1). `./test`
//! installs both (`chromium`, `chromium-driver`); without them the tests skip loudly.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::tools::required_tool;

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium session. Dropping it ends the session and the driver.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    http: reqwest::blocking::Client,
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium (`None`: one of them is not installed,
    /// and the test skips).
    pub fn start() -> Option<Self> {
        let chromium: PathBuf = required_tool("chromium", "the `chromium` package")?;
        let driver_bin = required_tool("chromedriver", "the `chromium-driver` package")?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        atomic::tls::install();
        let http = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while http
            .get(format!("{base}/status"))
            .send()
            .ok()
            .and_then(|r| r.json::<Value>().ok())
            .and_then(|status| status["value"]["ready"].as_bool())
            != Some(true)
        {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.display().to_string(),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,860",
                         "--no-proxy-server"]
            }
        }}});
        let mut browser = Self {
            driver,
            base,
            session: String::new(),
            http,
        };
        let created = browser.call("POST", "/session", &capabilities);
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        Some(browser)
    }

    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(body),
        };
        let answer: Value = request
            .send()
            .and_then(reqwest::blocking::Response::json)
            .unwrap_or_else(|error| panic!("webdriver {method} {path}: {error}"));
        if answer["value"]["error"].is_string() {
            panic!("webdriver {method} {path}: {}", answer["value"]);
        }
        answer["value"].clone()
    }

    fn session_call(&self, method: &str, path: &str, body: &Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Opens `url`.
    pub fn open(&self, url: &str) {
        self.session_call("POST", "/url", &json!({ "url": url }));
    }

    /// Runs `script` in the page (a function body; `arguments` holds `args`) and gives
    /// what it returns.
    pub fn script(&self, script: &str, args: &[Value]) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            &json!({ "script": script, "args": args }),
        )
    }

    /// Clicks the first element matching `css`.
    pub fn click(&self, css: &str) {
        let found = self.session_call(
            "POST",
            "/element",
            &json!({"using": "css selector", "value": css}),
        );
        let id = found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element `{css}`: {found}"))
            .to_owned();
        self.session_call("POST", &format!("/element/{id}/click"), &json!({}));
    }

    /// Waits until `script` returns true, for at most `limit`; panics with `what` if not.
    pub fn wait_for(&self, what: &str, limit: Duration, script: &str) {
        let deadline = Instant::now() + limit;
        loop {
            if self.script(script, &[]) == Value::Bool(true) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let encoded = self.session_call("GET", "/screenshot", &Value::Null);
        decode_base64(encoded.as_str().expect("base64 text"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self
                .http
                .delete(format!("{}/session/{}", self.base, self.session))
                .send();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (with padding) to bytes.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let clean: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for chunk in clean.chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let mut bits = 0_u32;
        for &c in &data {
            bits = (bits << 6) | value(c);
        }
        bits <<= 6 * (4 - u32::try_from(data.len()).expect("at most 4"));
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..data.len()]);
    }
    out
}
