//! Builds the web example (`examples/web`) for wasm32, binds it with wasm-bindgen and serves it
//! on localhost. With `--test`, runs the browser test instead: the fixed scene of `check.rs`
//! evaluated natively, then in headless Chromium on WebGPU, the two compared.
//!
//! ```text
//! cargo run --example web-serve                 # then open http://127.0.0.1:8000/
//! cargo run --example web-serve -- --test       # the browser test (Chromium with SwiftShader)
//! ```
//!
//! Needs the `wasm32-unknown-unknown` target (`rustup target add wasm32-unknown-unknown`) and
//! the wasm-bindgen CLI at the version of the `wasm-bindgen` crate in Cargo.lock
//! (`cargo install wasm-bindgen-cli --version <that version>`); the test needs Chromium.

#[path = "check.rs"]
mod check;

use clap::Parser;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Builds the web example and serves it on localhost, or runs the browser test.
#[derive(Parser)]
#[command(name = "web-serve")]
struct Args {
    /// Port on 127.0.0.1 (0: any free one).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Run the browser test: evaluate the fixed scene natively and in headless Chromium, compare.
    #[arg(long)]
    test: bool,
    /// The Chromium to run the test in.
    #[arg(long, default_value = "chromium")]
    chromium: String,
    /// Seconds the test waits for the browser's result.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

type Failure = Box<dyn std::error::Error>;

/// Chromium on WebGPU without a GPU: SwiftShader's Vulkan, and no network of its own.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-gpu-sandbox",
];

fn main() {
    let args = Args::parse();
    let run = || -> Result<bool, Failure> {
        let site = build()?;
        let listener = TcpListener::bind(("127.0.0.1", if args.test { 0 } else { args.port }))?;
        let address = format!("http://{}/", listener.local_addr()?);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || serve(&listener, &site, &tx));
        if args.test {
            browser_test(&args, &address, &rx)
        } else {
            println!("serving the crowd demo at {address} (Ctrl-C stops)");
            loop {
                std::thread::park();
            }
        }
    };
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// The crate's root and its target folder.
fn folders() -> (PathBuf, PathBuf) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    (root, target)
}

/// Builds the wasm example, binds it and copies the page: the folder to serve.
fn build() -> Result<PathBuf, Failure> {
    let (root, target) = folders();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let triple = "wasm32-unknown-unknown";
    eprintln!("building the web example for {triple}…");
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args(["build", "--example", "web", "--target", triple, "--no-default-features", "--features", "scene,gltf"])
        .status()?;
    if !status.success() {
        return Err(
            format!("the wasm build failed ({status}); is the target installed? rustup target add {triple}").into()
        );
    }
    let wanted = locked_version(&root.join("Cargo.lock"), "wasm-bindgen")?;
    let found = Command::new("wasm-bindgen").arg("--version").output().map_err(|e| {
        format!("wasm-bindgen not found ({e}); install it: cargo install wasm-bindgen-cli --version {wanted}")
    })?;
    let found = String::from_utf8_lossy(&found.stdout);
    if found.split_whitespace().nth(1) != Some(wanted.as_str()) {
        return Err(format!(
            "wasm-bindgen is '{}', the crate is {wanted}: cargo install wasm-bindgen-cli --version {wanted}",
            found.trim()
        )
        .into());
    }
    let site = target.join("web");
    let wasm = target.join(triple).join("debug/examples/web.wasm");
    let status = Command::new("wasm-bindgen")
        .args(["--target", "web", "--no-typescript", "--out-name", "web", "--out-dir"])
        .arg(site.join("pkg"))
        .arg(&wasm)
        .status()?;
    if !status.success() {
        return Err(format!("wasm-bindgen failed on {} ({status})", wasm.display()).into());
    }
    std::fs::copy(root.join("examples/web/index.html"), site.join("index.html"))?;
    Ok(site)
}

/// The version of `package` in `lock` (a Cargo.lock).
fn locked_version(lock: &Path, package: &str) -> Result<String, Failure> {
    let text = std::fs::read_to_string(lock)?;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{package}\"") {
            if let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = ")) {
                return Ok(v.trim_matches('"').to_owned());
            }
        }
    }
    Err(format!("{} has no package {package}", lock.display()).into())
}

/// Serves `site` forever; a POST to `/result` goes to `results`.
fn serve(listener: &TcpListener, site: &Path, results: &mpsc::Sender<Vec<u8>>) {
    for stream in listener.incoming().flatten() {
        let (site, results) = (site.to_path_buf(), results.clone());
        std::thread::spawn(move || {
            // A browser may close a connection it no longer needs: not worth a word.
            if let Err(e) = answer(stream, &site, &results)
                && !matches!(e.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset)
            {
                eprintln!("serving a request: {e}");
            }
        });
    }
}

/// Answers one HTTP/1.1 request (and closes the connection).
fn answer(stream: TcpStream, site: &Path, results: &mpsc::Sender<Vec<u8>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut parts = request.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let path = path.split('?').next().unwrap_or("/");
    let mut stream = stream;
    if method == "POST" && path == "/result" {
        // The page's result is well under a megabyte; a larger claim is not the page's.
        if length > 64 << 20 {
            return respond(&mut stream, "413 Content Too Large", "text/plain", b"too large");
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let _ = results.send(body);
        return respond(&mut stream, "200 OK", "text/plain", b"thanks");
    }
    let relative = if path == "/" { "index.html" } else { path.trim_start_matches('/') };
    if method != "GET" || relative.split('/').any(|part| part == ".." || part.is_empty()) {
        return respond(&mut stream, "404 Not Found", "text/plain", b"not found");
    }
    match std::fs::read(site.join(relative)) {
        Ok(bytes) => {
            let kind = match Path::new(relative).extension().and_then(|e| e.to_str()) {
                Some("html") => "text/html; charset=utf-8",
                Some("js") => "text/javascript",
                Some("wasm") => "application/wasm",
                _ => "application/octet-stream",
            };
            respond(&mut stream, "200 OK", kind, &bytes)
        }
        Err(_) => respond(&mut stream, "404 Not Found", "text/plain", b"not found"),
    }
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)
}

/// A difference within which the browser's evaluation is the native one.
struct Tolerance {
    /// Of a joint's position, as a fraction of the scene's extent (the diagonal of the box
    /// around the native joint positions, as the conformance fixtures' `scene_extent`).
    position: f32,
    /// Of an element of a joint's rotation and scale (unitless; the conformance fixtures'
    /// rotation tolerance: two devices' `sqrt` and fused multiply-adds differ by some ulps).
    rotation: f32,
    /// A pixel differs when a channel differs by more than this.
    channel: u8,
    /// The fraction of pixels that may differ (edges rasterized a pixel apart).
    pixels: f64,
}

const TOLERANCE: Tolerance = Tolerance { position: 1e-5, rotation: 1e-4, channel: 16, pixels: 0.01 };

/// The crowd's joints, whose feet IK plants: the law of cosines at a nearly straight knee turns a
/// last-bit difference between two devices into a little more than the fixtures' rotation
/// tolerance (1.2e-4 measured).
const IK_TOLERANCE: Tolerance = Tolerance { rotation: 5e-4, ..TOLERANCE };

/// The diagonal of the box around the positions (the `w` of each row) of `matrices`.
fn extent(matrices: &[f32]) -> f32 {
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for m in matrices.chunks_exact(12) {
        for axis in 0..3 {
            lo[axis] = lo[axis].min(m[axis * 4 + 3]);
            hi[axis] = hi[axis].max(m[axis * 4 + 3]);
        }
    }
    (0..3).map(|a| (hi[a] - lo[a]).powi(2)).sum::<f32>().sqrt().max(f32::MIN_POSITIVE)
}

/// The largest difference of positions and of the other elements between `a` and `b`
/// (infinite on a NaN).
fn largest(a: &[f32], b: &[f32]) -> (f32, f32) {
    let (mut position, mut rotation) = (0f32, 0f32);
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let d = if (x - y).is_nan() { f32::INFINITY } else { (x - y).abs() };
        if k % 4 == 3 {
            position = position.max(d);
        } else {
            rotation = rotation.max(d);
        }
    }
    (position, rotation)
}

/// How far `got` is from `want`: lines to print, and whether it is within [`TOLERANCE`].
fn compare(want: &check::Evaluation, got: &check::Evaluation) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    let mut ok = true;
    let joints = [
        ("crowd joint matrices", &want.crowd, &got.crowd, &IK_TOLERANCE),
        ("Fox joint matrices", &want.fox, &got.fox, &TOLERANCE),
    ];
    for (name, w, g, tolerance) in joints {
        if w.len() != g.len() {
            lines.push(format!("{name}: {} floats, native {}", g.len(), w.len()));
            ok = false;
            continue;
        }
        let extent = extent(w);
        let (position, rotation) = largest(w, g);
        let within = position <= tolerance.position * extent && rotation <= tolerance.rotation;
        ok &= within;
        lines.push(format!(
            "{name}: {} joints, positions within {:.2e} x extent {extent:.3} (tolerance {:.0e}), rotations within {rotation:.2e} (tolerance {:.0e}) {}",
            w.len() / 12,
            position / extent,
            tolerance.position,
            tolerance.rotation,
            if within { "ok" } else { "TOO FAR" }
        ));
    }
    if want.picture.len() == got.picture.len() {
        let differing = want
            .picture
            .chunks_exact(4)
            .zip(got.picture.chunks_exact(4))
            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > TOLERANCE.channel))
            .count();
        let fraction = differing as f64 / (want.picture.len() / 4) as f64;
        let within = fraction <= TOLERANCE.pixels;
        ok &= within;
        lines.push(format!(
            "picture: {differing} of {} pixels differ by more than {} ({:.3} %, tolerance {:.3} %) {}",
            want.picture.len() / 4,
            TOLERANCE.channel,
            100.0 * fraction,
            100.0 * TOLERANCE.pixels,
            if within { "ok" } else { "TOO FAR" }
        ));
    } else {
        lines.push(format!("picture: {} bytes, native {}", got.picture.len(), want.picture.len()));
        ok = false;
    }
    (lines, ok)
}

/// Closes the browser when the test ends, however it ends.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The browser test: `true` when the browser's evaluation is the native one and WebGPU reported
/// no error.
fn browser_test(args: &Args, address: &str, results: &mpsc::Receiver<Vec<u8>>) -> Result<bool, Failure> {
    eprintln!("evaluating the scene natively…");
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default())?;
    let native = pollster::block_on(check::evaluate(&device, &queue, 0.0))?;
    // The comparison must notice a wrong pose: the crowd a quarter second late.
    let late = pollster::block_on(check::evaluate(&device, &queue, 0.25))?;
    let (lines, passes) = compare(&native, &late);
    if passes || lines.iter().filter(|l| l.contains("TOO FAR")).count() < 2 {
        return Err(format!(
            "the comparison does not notice the crowd a quarter second late:\n  {}",
            lines.join("\n  ")
        )
        .into());
    }
    eprintln!("a wrong pose is noticed:\n  {}", lines.join("\n  "));
    let (_, target) = folders();
    let profile = target.join("web/chromium-profile");
    let _ = std::fs::remove_dir_all(&profile);
    eprintln!("opening {address}?test in {}…", args.chromium);
    let _browser = Browser(
        Command::new(&args.chromium)
            .args(CHROMIUM_FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("{address}?test"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {} ({e}); install Chromium or pass --chromium", args.chromium))?,
    );
    let body = results
        .recv_timeout(Duration::from_secs(args.timeout))
        .map_err(|_| format!("no result from the browser in {} s", args.timeout))?;
    let text = String::from_utf8_lossy(&body);
    if let Some(e) = text.strip_prefix("error: ") {
        return Err(format!("the page failed: {e}").into());
    }
    let (web, report) = check::decode(&body).ok_or("the page posted something that is not an evaluation")?;
    let mut report = report.lines();
    println!("{}", report.next().unwrap_or("adapter: ?"));
    let errors: Vec<&str> = report.filter(|l| !l.trim().is_empty()).collect();
    let (lines, mut ok) = compare(&native, &web);
    for line in &lines {
        println!("{line}");
    }
    if errors.is_empty() {
        println!("WebGPU errors: none");
    } else {
        ok = false;
        println!("WebGPU errors: {}", errors.len());
        for e in errors {
            println!("  {e}");
        }
    }
    // Then the demo, in the same page: it drew its frames and WebGPU reported no error.
    let body = results
        .recv_timeout(Duration::from_secs(args.timeout))
        .map_err(|_| format!("no report of the demo from the browser in {} s", args.timeout))?;
    let text = String::from_utf8_lossy(&body);
    match text.strip_prefix("demo: ") {
        Some(report) => {
            let mut lines = report.lines();
            println!("demo: {}", lines.next().unwrap_or(""));
            let errors: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
            if !errors.is_empty() {
                ok = false;
                println!("demo WebGPU errors: {}", errors.len());
                for e in errors {
                    println!("  {e}");
                }
            }
        }
        None => {
            ok = false;
            println!("{text}");
        }
    }
    println!("browser test: {}", if ok { "passed" } else { "FAILED" });
    Ok(ok)
}
