//! The crowd demo in a web page, on WebGPU: the built-in mannequins drawn into a canvas, with the
//! controls that make sense there and a readout of frame and GPU time. The same page, opened with
//! `?test`, evaluates the browser test's fixed scene (`check.rs`) and posts it to the server that
//! compares it with the native run.
//!
//! Build and serve it (needs the `wasm32-unknown-unknown` target and `wasm-bindgen-cli` at the
//! version of the `wasm-bindgen` crate in Cargo.lock):
//!
//! ```text
//! cargo run --example web-serve
//! ```
//!
//! then open the address it prints in a browser with WebGPU. `cargo run --example web-serve --
//! --test` runs the browser test in headless Chromium instead.

// Natively this example is empty: it is built for wasm32 by `web-serve`.
#![cfg(target_arch = "wasm32")]

mod check;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use wasm_bindgen::prelude::*;
use wgpu_anim::gpu::{GroundRenderer, PassTimer, depth_view, scene_pass};
use wgpu_anim::scene::{Character, Crowd, CrowdDesc};

/// What went wrong, for the page.
fn js(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// The browser's WebGPU adapter and a device with WebGPU's default limits (every pipeline of
/// the crate fits them), with timestamp queries when the adapter has them.
async fn device(
    surface: Option<&wgpu::Surface<'static>>,
    instance: &wgpu::Instance,
) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), JsValue> {
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions { compatible_surface: surface, ..Default::default() })
        .await
        .map_err(|e| js(format!("no WebGPU adapter: {e}")))?;
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("wgpu-anim web"),
            required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
            required_limits: wgpu::Limits::default(),
            ..Default::default()
        })
        .await
        .map_err(js)?;
    Ok((adapter, device, queue))
}

fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::BROWSER_WEBGPU,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    })
}

/// Panics reach the page's console with their message.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
}

/// Evaluates the browser test's scene and returns it as `check::encode` bytes followed by a
/// report: the adapter, then every WebGPU error the device reported, a line each. The page posts
/// them to the server, which compares them with the native run.
#[wasm_bindgen]
pub async fn run_test() -> Result<Vec<u8>, JsValue> {
    let instance = instance();
    let (adapter, device, queue) = device(None, &instance).await?;
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = errors.clone();
    device.on_uncaptured_error(Arc::new(move |e| sink.lock().unwrap_or_else(|p| p.into_inner()).push(e.to_string())));
    let evaluation = check::evaluate(&device, &queue, 0.0).await.map_err(js)?;
    let info = adapter.get_info();
    let mut out = check::encode(&evaluation);
    let report = format!(
        "adapter: {} ({:?})\n{}",
        info.name,
        info.backend,
        errors.lock().unwrap_or_else(|p| p.into_inner()).join("\n")
    );
    out.extend_from_slice(report.as_bytes());
    Ok(out)
}

/// The crowd demo drawing into a canvas.
/// Where the demo draws.
enum Output {
    Canvas(wgpu::Surface<'static>),
    /// A texture of the canvas's size: the browser test runs the demo so, since a headless
    /// browser on a software adapter may lose the device that presents to a canvas.
    Offscreen(wgpu::Texture),
}

#[wasm_bindgen]
pub struct Demo {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Where frames go: the canvas, or (`offscreen`) a texture of its size.
    output: Output,
    /// Width and height in pixels, and the color format.
    size: (u32, u32),
    format: wgpu::TextureFormat,
    depth: wgpu::TextureView,
    crowd: Crowd,
    timer: Option<Rc<PassTimer>>,
    last_ms: Option<f64>,
    frame_ms: f64,
    gpu_ms: Option<Result<f64, String>>,
    reading: Rc<RefCell<Option<Result<f64, String>>>>,
    /// The WebGPU errors the device reported (none is expected).
    errors: Arc<Mutex<Vec<String>>>,
    /// Frames drawn.
    frames: u64,
    /// A crowd made by `set_count`, which the next frame takes.
    next: Rc<RefCell<Option<Crowd>>>,
}

#[wasm_bindgen]
impl Demo {
    /// A crowd of `count` mannequins drawing into the canvas of id `canvas`, or, `offscreen`,
    /// into a texture of its size.
    pub async fn create(canvas: &str, count: u32, offscreen: bool) -> Result<Demo, JsValue> {
        let canvas: web_sys::HtmlCanvasElement = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(canvas))
            .ok_or_else(|| js(format!("no element #{canvas}")))?
            .dyn_into()
            .map_err(|_| js(format!("#{canvas} is not a canvas")))?;
        let (width, height) = (canvas.width().max(1), canvas.height().max(1));
        let instance = instance();
        let surface = if offscreen {
            None
        } else {
            Some(instance.create_surface(wgpu::SurfaceTarget::Canvas(canvas)).map_err(js)?)
        };
        let (adapter, device, queue) = device(surface.as_ref(), &instance).await?;
        let errors = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e| {
            web_sys::console::error_1(&e.to_string().into());
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e.to_string());
        }));
        let sink = errors.clone();
        device.set_device_lost_callback(move |reason, message| {
            let lost = format!("device lost ({reason:?}): {message}");
            web_sys::console::error_1(&lost.clone().into());
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(lost);
        });
        let (output, format) = match surface {
            Some(surface) => {
                let config = surface
                    .get_default_config(&adapter, width, height)
                    .ok_or_else(|| js("the canvas cannot be drawn into with this adapter"))?;
                surface.configure(&device, &config);
                (Output::Canvas(surface), config.format)
            }
            None => {
                let format = wgpu::TextureFormat::Rgba8UnormSrgb;
                let texture = device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("wgpu-anim web offscreen"),
                    size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                });
                (Output::Offscreen(texture), format)
            }
        };
        let depth = depth_view(&device, width, height);
        let crowd = Self::crowd(&device, format, count).await?;
        let timer = PassTimer::new(&device, &queue, crowd.animator.dispatches_per_frame().max(1)).map(Rc::new);
        Ok(Demo {
            device,
            queue,
            output,
            size: (width, height),
            format,
            depth,
            crowd,
            timer,
            last_ms: None,
            frame_ms: 0.0,
            gpu_ms: None,
            reading: Rc::new(RefCell::new(None)),
            errors,
            frames: 0,
            next: Rc::new(RefCell::new(None)),
        })
    }

    async fn crowd(device: &wgpu::Device, format: wgpu::TextureFormat, count: u32) -> Result<Crowd, JsValue> {
        let desc = CrowdDesc { count: count.max(1), ..CrowdDesc::default() };
        Crowd::with_character_async(
            device,
            format,
            Some(wgpu_anim::gpu::OffscreenTarget::DEPTH_FORMAT),
            1,
            &desc,
            Character::mannequin(),
        )
        .await
        .map_err(js)
    }

    /// A new crowd of `count` members (the others' settings kept), made while the page shows the
    /// old one: a promise that resolves once it replaces it.
    pub fn set_count(&self, count: u32) -> js_sys::Promise {
        let (device, format, next) = (self.device.clone(), self.format, self.next.clone());
        wasm_bindgen_futures::future_to_promise(async move {
            let crowd = Self::crowd(&device, format, count).await?;
            *next.borrow_mut() = Some(crowd);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Pauses or resumes the animation.
    pub fn set_paused(&mut self, paused: bool) {
        self.crowd.set_animation_paused(paused);
    }

    /// Whether members walk and run across the field or animate in place.
    pub fn set_moving(&mut self, moving: bool) {
        self.crowd.set_moving(moving);
    }

    /// The fused path (the clock, then the rest in one dispatch) or the staged one.
    pub fn set_fused(&mut self, fused: bool) -> Result<(), JsValue> {
        self.crowd.animator.set_fused(fused).map_err(js)?;
        self.timer =
            PassTimer::new(&self.device, &self.queue, self.crowd.animator.dispatches_per_frame().max(1)).map(Rc::new);
        Ok(())
    }

    /// Draws a frame at `now_ms` (the page's `requestAnimationFrame` time).
    pub fn frame(&mut self, now_ms: f64) -> Result<(), JsValue> {
        let next = self.next.borrow_mut().take();
        if let Some(crowd) = next {
            self.replace_crowd(crowd)?;
        }
        let dt = self.last_ms.map_or(1.0 / 60.0, |last| ((now_ms - last) / 1000.0).clamp(0.0, 0.1));
        if let Some(last) = self.last_ms {
            // A moving average over about half a second.
            self.frame_ms += ((now_ms - last) - self.frame_ms) * 0.05;
        }
        self.last_ms = Some(now_ms);
        let aspect = self.size.0 as f32 / self.size.1 as f32;
        self.crowd.set_camera(&self.queue, &self.crowd.overview_camera(aspect));
        self.crowd.update(&self.queue, dt as f32);
        let (frame, view) = match &self.output {
            Output::Canvas(surface) => match surface.get_current_texture() {
                wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => {
                    let view = t.texture.create_view(&Default::default());
                    (Some(t), view)
                }
                // Hidden, resized or not ready: this frame draws nothing (the animation ran).
                _ => return Ok(()),
            },
            Output::Offscreen(texture) => (None, texture.create_view(&Default::default())),
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let timed = self.timer.is_some() && self.reading.borrow().is_none() && !self.timer_busy();
        self.crowd.animator.encode_timed(&mut encoder, self.timer.as_deref().filter(|_| timed)).map_err(js)?;
        if let (true, Some(timer)) = (timed, &self.timer) {
            timer.resolve(&mut encoder);
        }
        {
            let mut pass = scene_pass(&mut encoder, &view, &self.depth, GroundRenderer::SKY);
            self.crowd.draw(&mut pass).map_err(js)?;
        }
        self.queue.submit([encoder.finish()]);
        if let Some(frame) = frame {
            self.queue.present(frame);
        }
        if let Some(ms) = self.reading.borrow_mut().take() {
            self.gpu_ms = Some(ms);
        }
        if timed {
            self.read_timer();
        }
        self.frames += 1;
        Ok(())
    }

    /// Frames drawn so far.
    pub fn frames(&self) -> f64 {
        self.frames as f64
    }

    /// The WebGPU errors the device reported, a line each (none is expected).
    pub fn errors(&self) -> String {
        self.errors.lock().unwrap_or_else(|p| p.into_inner()).join("\n")
    }

    /// A line of text: characters, path, frame time and GPU time.
    pub fn readout(&self) -> String {
        let gpu = match (&self.timer, &self.gpu_ms) {
            (None, _) => "GPU time n/a (no timestamp queries)".to_owned(),
            (Some(_), None) => "GPU time …".to_owned(),
            (Some(_), Some(Ok(ms))) => format!("GPU {ms:.2} ms"),
            (Some(_), Some(Err(e))) => format!("GPU time unread: {e}"),
        };
        format!(
            "{} characters · {} · frame {:.1} ms ({:.0} fps) · {gpu}",
            self.crowd.count(),
            if self.crowd.animator.is_fused() { "fused" } else { "staged" },
            self.frame_ms,
            if self.frame_ms > 0.0 { 1000.0 / self.frame_ms } else { 0.0 },
        )
    }
}

impl Demo {
    /// Puts `crowd` in the place of the current one, with the current one's settings.
    fn replace_crowd(&mut self, mut crowd: Crowd) -> Result<(), JsValue> {
        crowd.set_moving(self.crowd.is_moving());
        crowd.set_animation_paused(self.crowd.is_animation_paused());
        if crowd.animator.fused_available() {
            crowd.animator.set_fused(self.crowd.animator.is_fused()).map_err(js)?;
        }
        self.crowd = crowd;
        self.timer =
            PassTimer::new(&self.device, &self.queue, self.crowd.animator.dispatches_per_frame().max(1)).map(Rc::new);
        *self.reading.borrow_mut() = None;
        self.gpu_ms = None;
        Ok(())
    }

    fn timer_busy(&self) -> bool {
        Rc::strong_count(&self.reading) > 1
    }

    /// Reads the timer's passes back without blocking: the sum lands in `reading` when the
    /// browser has mapped it, and the next frames show it.
    fn read_timer(&self) {
        let (Some(timer), reading) = (self.timer.clone(), self.reading.clone()) else { return };
        let (device, queue) = (self.device.clone(), self.queue.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let ms = timer.read_ms_async(&device, &queue).await;
            *reading.borrow_mut() = Some(ms.map(|ms| ms.iter().sum()).map_err(|e| e.to_string()));
        });
    }
}
