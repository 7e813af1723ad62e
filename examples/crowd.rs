//! The crowd demo: built-in mannequins idling, walking and running across a field (every fourth
//! with a sword in its right hand, placed by a socket the GPU writes), every one animated on the
//! GPU with its own clip, phase and rate — or, with `--model PATH`, a crowd of a
//! character imported from a glTF file playing its clips in place (for example
//! `--model assets/Fox/Fox.gltf`: foxes surveying, walking and running). The clips are
//! compressed (`wgpu_anim::offline::compress`) and decoded by the sample pass; `--raw-clips` plays the raw
//! keys.
//!
//! What each mannequin plays is decided on the GPU by a state machine, `assets/crowd.machine.json`
//! (built into the demo; `--machine PATH` reads another, `--no-machine` lets the crowd blend its
//! locomotion tree and cross-fade to idle and back itself, with a share of the crowd waving all
//! the time): idle, walk, run, walk_backward, strafe_left and strafe_right by the speed and
//! direction the wander logic steers each member at (float parameters `speed`, m/s, and
//! `direction`, degrees from straight ahead, positive to the left), and a one-shot `wave` on
//! trigger `wave` from any state, back to idle once played (exit time 1). W sets the trigger on a
//! random tenth of the crowd (`--wave-at N` presses it at frame N; with `--headless`, at a third
//! of the frames unless given). The window title shows how many characters each state holds,
//! read back from the GPU without waiting; `--headless` prints them at the end.
//!
//! ```text
//! cargo run --release --example crowd -- [--model PATH] [--raw-clips] [--count N] [--frames N --screenshot PATH] [--headless]
//!     [--machine PATH | --no-machine] [--wave-at N]
//! ```
//!
//! Mouse: drag to orbit, wheel to zoom. Keys: W makes a random tenth of the crowd wave, Space pauses everything, P pauses or resumes the
//! animation only (characters keep moving, the camera still orbits), L toggles the characters'
//! movement (walking across the field, or animating in place), +/- change the time scale,
//! Up/Down add or remove 10 % of the characters, R resets the camera, K loses the GPU device (the
//! demo rebuilds everything on a new one and the crowd carries on), F1 or H prints this help,
//! Esc quits; U and V turn update-rate LOD and vertex animation textures for far characters on and
//! off, T (or `--lod-tint`) tints each character by how it is animated. The window title shows the frame time, the character count (how many are seen skinned,
//! evaluated and drawn by VAT), the GPU time of
//! each animation pass — clock, sample, local_to_model, palette, or the clock and the fused pass — and their total (when the
//! adapter has timestamp queries), and the clip events (footsteps) the GPU fires per second. Where a
//! foot lands, the GPU stamps a footprint on the ground that fades in a few seconds.
//!
//! `--frames N --screenshot PATH` runs N frames of 1/60 s and saves the last one as a PNG (with
//! `--headless`, without opening a window). `--lose-device-at N` destroys the device after N
//! frames, as a driver reset would: the demo rebuilds the crowd on a new device from what its
//! animator kept ([`wgpu_anim::Animator::rebuild`]) and goes on.

use clap::Parser;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, PassTimer};
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::scene::{Character, Crowd, CrowdDesc};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

const DEPTH: wgpu::TextureFormat = wgpu_anim::gpu::OffscreenTarget::DEPTH_FORMAT;

const KEY_HELP: &str = "\
crowd demo controls:
  drag         orbit the camera
  wheel        zoom
  W            a random tenth of the crowd waves (the machine's trigger `wave`)
  Space        pause / resume everything
  P            pause / resume the animation only (characters keep moving)
  L            characters move across the field / animate in place
  + / -        faster / slower time
  Up / Down    add / remove 10 % of the characters
  R            reset the camera
  F            fused (two dispatches) / staged (one per stage) GPU path
  U            update-rate LOD on / off (far characters evaluated every 2, 4 or 8 frames)
  V            vertex animation textures on / off (the farthest characters drawn with no skeleton)
  T            tint by LOD on / off: blue evaluated every frame, green every 2nd, yellow every
               4th, red every 8th, violet drawn by VAT
  K            lose the GPU device (the demo rebuilds the crowd on a new one)
  F1 / H       print this help
  Esc          quit";

/// The crowd demo: built-in mannequins idling, walking and running across a field, animated on
/// the GPU (or a crowd of a glTF character with --model).
#[derive(Parser)]
#[command(name = "crowd", after_help = KEY_HELP)]
struct Args {
    /// A crowd of the character of a glTF file [default: the built-in mannequin].
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// With --model: play the built-in mannequin's clips, retargeted onto the model by the
    /// humanoid profile (`offline::retarget`: Mixamo's, the CMU takes', the mannequin's or a
    /// control rig's joint names) and stood in its skin's bind pose, instead of the model's own.
    #[arg(long, requires = "model")]
    mannequin_clips: bool,
    /// Play the clips as raw keys [default: compressed with the default settings, decoded on
    /// the GPU].
    #[arg(long)]
    raw_clips: bool,
    /// Characters in the crowd [default: 10,000 on a GPU; 1,000 on a software adapter or with
    /// --headless].
    #[arg(long, value_name = "N")]
    count: Option<u32>,
    /// Run N frames of 1/60 s, save --screenshot if given, and quit [default with --screenshot
    /// or --headless: 120].
    #[arg(long, value_name = "N")]
    frames: Option<u32>,
    /// Save the last frame as a PNG.
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Render offscreen, without opening a window.
    #[arg(long)]
    headless: bool,
    /// Destroy the GPU device after N frames, as a driver reset would; the demo rebuilds the
    /// crowd on a new device and carries on.
    #[arg(long, value_name = "N")]
    lose_device_at: Option<u32>,
    /// Stamp no footprints where feet land.
    #[arg(long)]
    no_footprints: bool,
    /// Skin every character with dual quaternions instead of linear blending.
    #[arg(long)]
    dual_quaternion: bool,
    /// Tint every character by how it is animated (the T key): blue evaluated every frame,
    /// green every 2nd, yellow every 4th, red every 8th, violet drawn by its vertex animation
    /// texture.
    #[arg(long)]
    lod_tint: bool,
    /// Start with update-rate LOD off (the U key) [default: on, far characters evaluated every 2,
    /// 4 or 8 frames].
    #[arg(long)]
    no_lod: bool,
    /// The mannequins' state machine, a JSON file [default: assets/crowd.machine.json, built in].
    #[arg(long, value_name = "PATH", conflicts_with = "no_machine")]
    machine: Option<PathBuf>,
    /// No state machine: the crowd chooses what each mannequin plays itself.
    #[arg(long)]
    no_machine: bool,
    /// Press W (a random tenth of the crowd waves) at frame N [default with --headless: a third
    /// of the frames].
    #[arg(long, value_name = "N")]
    wave_at: Option<u32>,
}

/// The mannequins' state machine (`--machine` replaces it).
const CROWD_MACHINE: &str = include_str!("../assets/crowd.machine.json");

/// The machine of `--machine`, or the built-in one.
fn machine(args: &Args) -> Result<wgpu_anim::machine::StateMachine, wgpu_anim::Error> {
    match &args.machine {
        Some(path) => wgpu_anim::machine::StateMachine::load(path),
        None => wgpu_anim::machine::StateMachine::from_json(CROWD_MACHINE),
    }
}

/// W: the machine's trigger `wave` on a random tenth of the crowd.
fn wave(crowd: &mut Crowd) {
    match crowd.trigger("wave", 0.1) {
        Ok(0) => println!("W: no character follows a state machine (--no-machine, or --model)"),
        Ok(n) => println!("W: {n} characters wave"),
        Err(e) => println!("W: {e}"),
    }
}

/// How the crowd is skinned: dual quaternions with `--dual-quaternion`.
fn skinning(args: Option<&Args>) -> wgpu_anim::gpu::Skinning {
    if args.is_some_and(|a| a.dual_quaternion) {
        wgpu_anim::gpu::Skinning::DualQuaternion
    } else {
        wgpu_anim::gpu::Skinning::Linear
    }
}

/// Update-rate LOD (unless `--no-lod`) and `--lod-tint`.
fn start_options(queue: &wgpu::Queue, crowd: &mut Crowd, args: &Args) -> Result<(), wgpu_anim::Error> {
    if !args.no_lod {
        crowd.animator.controller_mut().set_update_rates(Some(wgpu_anim::gpu::DEFAULT_UPDATE_RATES))?;
    }
    crowd.set_lod_tint(queue, args.lod_tint);
    Ok(())
}

/// Frames between the animator's recovery checkpoints (half a second at 60 fps).
const RECOVERY_INTERVAL: NonZeroU32 = NonZeroU32::new(30).unwrap();

/// A flag the device sets when it is lost (destroyed, reset, removed).
fn watch_device(device: &wgpu::Device) -> Arc<AtomicBool> {
    let lost = Arc::new(AtomicBool::new(false));
    let flag = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        eprintln!("the GPU device was lost ({reason:?}): {message}");
        flag.store(true, Ordering::Release);
    });
    lost
}

/// `rebuilt the crowd (1,000 characters) on a new device: 12 frames replayed, 35.2 ms`.
fn report_rebuild(crowd: &Crowd, replayed: Option<usize>, started: Instant) {
    println!(
        "rebuilt the crowd ({} characters) on a new device: {} frames replayed, {:.1} ms",
        crowd.count(),
        replayed.unwrap_or(0),
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// The starting GPU path (F switches): the fused one where the device allows it, except on a
/// software adapter, where the staged path measured a little faster with raw clips (see the
/// guide's performance page and benches/results/: a CPU pays for a workgroup's idle lanes and
/// barriers as for work).
fn choose_path(device: &wgpu::Device, animator: &mut wgpu_anim::Animator) -> Result<(), wgpu_anim::Error> {
    let software = device.adapter_info().device_type == wgpu::DeviceType::Cpu;
    let fused = animator.fused_available() && !software;
    animator.set_fused(fused)?;
    println!(
        "GPU path: {}{} (F switches)",
        if fused { "fused" } else { "staged" },
        if software && animator.fused_available() { ", the faster one on a software adapter" } else { "" }
    );
    Ok(())
}

/// The character count: what was asked, or a default that suits the adapter.
fn character_count(args: &Args, adapter: &wgpu::AdapterInfo) -> u32 {
    if let Some(n) = args.count {
        return n;
    }
    if adapter.device_type == wgpu::DeviceType::Cpu {
        println!("{} is a software adapter: starting with 1,000 characters (set more with --count)", adapter.name);
        1_000
    } else {
        10_000
    }
}

/// The character of `--model`, or the mannequin.
fn character(args: &Args) -> Result<Character, wgpu_anim::Error> {
    let format = if args.raw_clips { ClipFormat::Raw } else { ClipFormat::Compressed };
    match &args.model {
        Some(path) if args.mannequin_clips => mannequin_clips_on(path, format),
        Some(path) => Character::from_gltf_in(path, format),
        None if args.no_machine => Ok(Character::mannequin_in(format)),
        None => Character::mannequin_with_machine(format, &machine(args)?),
    }
}

/// The character of the glTF file `path` playing the mannequin's clips, retargeted onto its
/// skeleton (the humanoid profile's bone map, the hips scaled by the ratio of the hip heights).
fn mannequin_clips_on(path: &std::path::Path, format: ClipFormat) -> Result<Character, wgpu_anim::Error> {
    use wgpu_anim::offline::gltf_import::{self, ClipSource, ImportedClip};
    use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
    let mut imported = gltf_import::load(path)?;
    let s = Character::skeleton_of(&imported)?;
    let target = &imported.skeletons[s];
    let source = wgpu_anim::mannequin::skeleton();
    let map = BoneMap::humanoid(&source, &target.skeleton)?;
    let mut options = RetargetOptions::default();
    if !target.skin_joints.is_empty() {
        // Stood in the pose its mesh was bound in: a file's nodes may hold another pose (the
        // knight's do).
        options = options.with_target_skinned(target.skin_joints.clone()).with_target_bind_rest();
    }
    let r = Retargeter::new(&source, &target.skeleton, &map, &options)?;
    let clips = wgpu_anim::mannequin::clips(&source)
        .iter()
        .map(|c| Ok(ImportedClip { animation: 0, clip: r.retarget(c)? }))
        .collect::<Result<Vec<_>, wgpu_anim::Error>>()?;
    println!(
        "{} mannequin clips retargeted onto '{}' ({} joints mapped, hip-height ratio {:.3})",
        clips.len(),
        target.skeleton.name(),
        map.len(),
        r.height_ratio()
    );
    imported.skeletons[s].clips = clips;
    let clip_source = match format.settings() {
        Some(settings) => ClipSource::Compress(settings),
        None => ClipSource::Raw,
    };
    Character::from_imported_with(&imported, s, &clip_source)
}

/// The most passes a frame records: clock, cull, sample, local_to_model, ik and palette.
const MAX_PASSES: u32 = 6;

/// An orbit camera around the crowd's centre.
struct Orbit {
    yaw: f32,
    pitch: f32,
    distance: f32,
    home: (f32, f32, f32),
    /// Height of the point looked at.
    target_y: f32,
    /// Closest zoom.
    min_distance: f32,
}

impl Orbit {
    /// A camera over a crowd of half side `extent`; distances and heights scale with the
    /// character's size.
    fn new(crowd: &Crowd) -> Self {
        let (f, h) = (crowd.character.relative_footprint, crowd.character.relative_height);
        let home = (0.6, 0.45, crowd.half_extent() * 2.0 + 6.0 * f);
        Self { yaw: home.0, pitch: home.1, distance: home.2, home, target_y: 0.8 * h, min_distance: 2.0 * f }
    }
    fn camera(&self, aspect: f32) -> Camera {
        let dir =
            glam::Vec3::new(self.yaw.sin() * self.pitch.cos(), self.pitch.sin(), self.yaw.cos() * self.pitch.cos());
        let target = glam::Vec3::new(0.0, self.target_y, 0.0);
        Camera::look_at(target + dir * self.distance, target, 45f32.to_radians(), aspect, 0.1, 3000.0)
    }
}

struct Gpu {
    instance: wgpu::Instance,
    /// Set when the device is lost.
    lost: Arc<AtomicBool>,
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    config: wgpu::SurfaceConfiguration,
    depth: wgpu::TextureView,
    crowd: Crowd,
    full_count: usize,
    timer: Option<PassTimer>,
    orbit: Orbit,
}

#[derive(Default)]
struct App {
    gpu: Option<Gpu>,
    args: Option<Args>,
    error: Option<String>,
    last: Option<Instant>,
    frame_ms: f32,
    pass_ms: Option<Vec<f64>>,
    frames_done: u32,
    paused: bool,
    time_scale: f32,
    dragging: bool,
    cursor: Option<(f64, f64)>,
    last_title: Option<Instant>,
}

impl App {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), Box<dyn std::error::Error>> {
        let attrs = Window::default_attributes()
            .with_title("wgpu-anim crowd")
            .with_inner_size(winit::dpi::LogicalSize::new(1280.0, 720.0));
        let window = Arc::new(event_loop.create_window(attrs)?);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(
            event_loop.owned_display_handle(),
        )));
        let surface = instance.create_surface(window.clone())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: Some(&surface),
            apply_limit_buckets: false,
        }))?;
        let (device, queue) = wgpu_anim::gpu::request_device(&adapter)?;
        let size = window.inner_size();
        let config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .ok_or("the surface is not supported by the adapter")?;
        surface.configure(&device, &config);
        let args = self.args.as_ref().ok_or("no arguments")?;
        let count = character_count(args, &adapter.get_info());
        let mut crowd = Crowd::with_character(
            &device,
            config.format,
            Some(DEPTH),
            1,
            &CrowdDesc {
                count,
                footprints: !self.args.as_ref().is_some_and(|a| a.no_footprints),
                skinning: skinning(self.args.as_ref()),
                ..Default::default()
            },
            character(args)?,
        )?;
        choose_path(&device, &mut crowd.animator)?;
        crowd.animator.set_recovery(&device, Some(RECOVERY_INTERVAL));
        start_options(&queue, &mut crowd, args)?;
        let lost = watch_device(&device);
        let timer = PassTimer::new(&device, &queue, MAX_PASSES);
        let depth = wgpu_anim::gpu::depth_view(&device, config.width, config.height);
        let orbit = Orbit::new(&crowd);
        self.time_scale = 1.0;
        println!("press F1 or H for the controls");
        self.gpu = Some(Gpu {
            instance,
            lost,
            window,
            surface,
            device,
            queue,
            config,
            depth,
            full_count: crowd.count(),
            crowd,
            timer,
            orbit,
        });
        Ok(())
    }

    /// After the device is lost: a new adapter and device for the same surface, and everything
    /// on it made again — the crowd from what its animator kept, so that it carries on.
    fn rebuild_device(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let g = self.gpu.as_mut().ok_or("no GPU state")?;
        let started = Instant::now();
        let adapter = pollster::block_on(g.instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: Some(&g.surface),
            apply_limit_buckets: false,
        }))?;
        let (device, queue) = wgpu_anim::gpu::request_device(&adapter)?;
        g.surface.configure(&device, &g.config);
        let crowd = g.crowd.rebuild(&device, &queue, g.config.format, Some(DEPTH), 1)?;
        report_rebuild(&crowd, g.crowd.animator.recovery_frames(), started);
        g.lost = watch_device(&device);
        g.timer = PassTimer::new(&device, &queue, MAX_PASSES);
        g.depth = wgpu_anim::gpu::depth_view(&device, g.config.width, g.config.height);
        g.crowd = crowd;
        g.device = device;
        g.queue = queue;
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, e: impl std::fmt::Display) {
        self.error = Some(e.to_string());
        event_loop.exit();
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let now = Instant::now();
        let real_dt = self.last.map_or(1.0 / 60.0, |l| (now - l).as_secs_f32()).min(0.1);
        self.last = Some(now);
        self.frame_ms = self.frame_ms * 0.9 + real_dt * 1000.0 * 0.1;
        let fixed = self.args.as_ref().is_some_and(|a| a.frames.is_some());
        let dt = if self.paused {
            0.0
        } else if fixed {
            1.0 / 60.0
        } else {
            real_dt * self.time_scale
        };
        if self.gpu.as_ref().is_some_and(|g| g.lost.load(Ordering::Acquire)) {
            if let Err(e) = self.rebuild_device() {
                self.fail(event_loop, format!("rebuilding after a lost device: {e}"));
                return;
            }
        }
        let lose_at = self.args.as_ref().and_then(|a| a.lose_device_at);
        let wave_at = self.args.as_ref().and_then(|a| a.wave_at);
        let Some(g) = self.gpu.as_mut() else { return };
        if wave_at == Some(self.frames_done) {
            wave(&mut g.crowd);
        }
        if lose_at == Some(self.frames_done) && !g.lost.load(Ordering::Acquire) {
            println!("--lose-device-at {}: destroying the device", self.frames_done);
            g.device.destroy();
            let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
            return;
        }
        if g.config.width == 0 || g.config.height == 0 {
            return; // minimised
        }
        let frame = match g.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f) | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                g.surface.configure(&g.device, &g.config);
                return;
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return,
            other => {
                let msg = format!("surface error: {other:?}");
                self.fail(event_loop, msg);
                return;
            }
        };
        let aspect = g.config.width as f32 / g.config.height as f32;
        // The camera first: the update culls against it.
        g.crowd.set_camera(&g.queue, &g.orbit.camera(aspect));
        g.crowd.update(&g.queue, dt);
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = g.device.create_command_encoder(&Default::default());
        let passes = g.crowd.animator.encode_timed(&mut encoder, g.timer.as_ref());
        g.crowd.encode_after_passes(&mut encoder);
        if let Some(t) = &g.timer {
            t.resolve(&mut encoder);
        }
        let drawn = {
            let mut pass = wgpu_anim::gpu::scene_pass(&mut encoder, &view, &g.depth, GroundRenderer::SKY);
            g.crowd.draw(&mut pass)
        };
        if let Err(e) = passes.and(drawn) {
            self.fail(event_loop, format!("recording a frame: {e}"));
            return;
        }
        g.queue.submit([encoder.finish()]);
        g.window.pre_present_notify();
        g.queue.present(frame);
        self.frames_done += 1;
        // Timestamps: read about twice a second (reading waits for the GPU).
        if self.last_title.is_none_or(|t| t.elapsed().as_secs_f32() > 0.5) {
            if let Some(t) = &g.timer {
                self.pass_ms = t.read_ms(&g.device, &g.queue).ok();
            }
            let passes = g.crowd.animator.passes();
            let gpu = self.pass_ms.as_deref().map_or("GPU n/a".to_string(), |ms| pass_summary(ms, &passes));
            let mut state = String::new();
            if self.paused {
                state += " (paused)";
            } else if g.crowd.is_animation_paused() {
                state += " (animation paused)";
            }
            if !g.crowd.is_moving() {
                state += " (in place)";
            }
            if let Some(n) = g.crowd.machine_counts() {
                state += &format!(" — {n}");
            }
            let seen = match g.crowd.cull_counts(&g.device, &g.queue) {
                Ok(Some(n)) => format!(" ({} seen skinned, {} evaluated, {} by VAT)", n.drawn, n.evaluated, n.vat),
                _ => String::new(),
            };
            g.window.set_title(&format!(
                "wgpu-anim crowd — {:.1} ms/frame — {} characters{seen} ({}) — {gpu} — {:.0} events/s — x{:.2}{state}",
                self.frame_ms,
                g.crowd.count(),
                g.crowd.character.name,
                g.crowd.events_per_second(),
                self.time_scale,
            ));
            self.last_title = Some(Instant::now());
        }
        if let Some(args) = &self.args {
            if args.frames.is_some_and(|n| self.frames_done >= n) {
                if let Some(path) = &args.screenshot {
                    if let Err(e) =
                        screenshot(&g.device, &g.queue, &g.crowd, &g.orbit, g.config.width, g.config.height, path)
                    {
                        self.fail(event_loop, e);
                        return;
                    }
                    println!("saved {}", path.display());
                }
                event_loop.exit();
            }
        }
    }

    fn key(&mut self, key: &Key, event_loop: &ActiveEventLoop) {
        let Some(g) = self.gpu.as_mut() else { return };
        match key {
            Key::Named(NamedKey::Escape) => event_loop.exit(),
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("w") => wave(&mut g.crowd),
            Key::Named(NamedKey::Space) => self.paused = !self.paused,
            Key::Named(NamedKey::ArrowDown) => {
                let n = g.crowd.count() * 9 / 10;
                g.crowd.truncate(n);
            }
            Key::Named(NamedKey::ArrowUp) => {
                // Characters removed earlier come back by rebuilding at the larger count.
                let n = (g.crowd.count() * 11 / 10 + 1).min(g.full_count.max(1));
                if n > g.crowd.count() {
                    match Crowd::with_character(
                        &g.device,
                        g.config.format,
                        Some(DEPTH),
                        1,
                        &CrowdDesc {
                            count: n as u32,
                            footprints: !self.args.as_ref().is_some_and(|a| a.no_footprints),
                            skinning: skinning(self.args.as_ref()),
                            ..Default::default()
                        },
                        g.crowd.character.clone(),
                    ) {
                        Ok(mut c) => {
                            let _ = c.animator.set_fused(g.crowd.animator.is_fused());
                            c.animator.set_recovery(&g.device, Some(RECOVERY_INTERVAL));
                            c.set_moving(g.crowd.is_moving());
                            c.set_animation_paused(g.crowd.is_animation_paused());
                            c.set_lod_tint(&g.queue, g.crowd.lod_tint());
                            let (old, new) = (g.crowd.animator.controller(), c.animator.controller_mut());
                            let _ = new.set_update_rates(old.update_rates());
                            let _ = new.set_vat_size(old.vat_size());
                            g.crowd = c;
                        }
                        Err(e) => eprintln!("{e}"),
                    }
                }
            }
            Key::Character(c) if c.as_str() == "+" || c.as_str() == "=" => {
                self.time_scale = (self.time_scale * 1.25).min(8.0)
            }
            Key::Character(c) if c.as_str() == "-" => self.time_scale = (self.time_scale / 1.25).max(0.05),
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("r") => {
                (g.orbit.yaw, g.orbit.pitch, g.orbit.distance) = g.orbit.home;
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("p") => {
                let paused = !g.crowd.is_animation_paused();
                g.crowd.set_animation_paused(paused);
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("l") => {
                let moving = !g.crowd.is_moving();
                g.crowd.set_moving(moving);
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("f") => {
                let fused = !g.crowd.animator.is_fused();
                match g.crowd.animator.set_fused(fused) {
                    Ok(()) => println!("GPU path: {}", if fused { "fused" } else { "staged" }),
                    Err(e) => println!("{e}"),
                }
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("u") => {
                let on = g.crowd.animator.controller().update_rates().is_none();
                let rates = on.then_some(wgpu_anim::gpu::DEFAULT_UPDATE_RATES);
                match g.crowd.animator.controller_mut().set_update_rates(rates) {
                    Ok(()) => println!("update-rate LOD: {}", if on { "on" } else { "off" }),
                    Err(e) => println!("{e}"),
                }
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("v") && g.crowd.vat().is_some() => {
                let on = g.crowd.animator.controller().vat_size().is_none();
                let size = on.then_some(wgpu_anim::gpu::DEFAULT_VAT_SIZE);
                match g.crowd.animator.controller_mut().set_vat_size(size) {
                    Ok(()) => {
                        println!("vertex animation textures for far characters: {}", if on { "on" } else { "off" })
                    }
                    Err(e) => println!("{e}"),
                }
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("t") => {
                let on = !g.crowd.lod_tint();
                g.crowd.set_lod_tint(&g.queue, on);
                println!("tint by LOD: {}", if on { "on" } else { "off" });
            }
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("k") => {
                println!("K: destroying the GPU device");
                g.device.destroy();
                let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
            }
            Key::Named(NamedKey::F1) => println!("{KEY_HELP}"),
            Key::Character(c) if c.as_str().eq_ignore_ascii_case("h") => println!("{KEY_HELP}"),
            _ => {}
        }
    }
}

/// `GPU clock 0.12 + sample 1.30 + local_to_model 0.20 + palette 0.10 = 1.72 ms` from the
/// timestamps of the animation passes (`passes`, in the animator's order), or `GPU fused 1.20 ms`.
fn pass_summary(ms: &[f64], passes: &[wgpu_anim::shaders::Stage]) -> String {
    if passes == [wgpu_anim::shaders::Stage::Fused] {
        return format!("GPU fused {:.2} ms", ms.first().copied().unwrap_or(0.0));
    }
    let names: Vec<&str> = passes.iter().map(|s| s.name()).collect();
    // The timer has room for the most passes a frame records; those past this frame's are unused.
    let ms = &ms[..ms.len().min(names.len())];
    let parts: Vec<String> = names.iter().zip(ms).map(|(name, ms)| format!("{name} {ms:.2}")).collect();
    format!("GPU {} = {:.2} ms", parts.join(" + "), ms.iter().sum::<f64>())
}

/// Renders the current state offscreen at the window's size and saves it.
fn screenshot(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    crowd: &Crowd,
    orbit: &Orbit,
    width: u32,
    height: u32,
    path: &std::path::Path,
) -> Result<(), wgpu_anim::Error> {
    let target = OffscreenTarget::new(device, width, height)?;
    // The crowd's renderers were built for the surface format; build a second crowd view only
    // if the formats differ. The animation state is shared through the same animator, so draw
    // with a renderer for the offscreen format.
    let mut renderer = wgpu_anim::SkinnedRenderer::new(
        device,
        &crowd.animator,
        crowd.character.skeleton,
        &crowd.character.mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )?;
    let relief = crowd.character.ik.map(|_| wgpu_anim::scene::RELIEF);
    let ground =
        GroundRenderer::new(device, OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT), 1, relief);
    let props = crowd.prop_renderer(device, OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT), 1)?;
    let footprints =
        crowd.footprint_renderer(device, OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT), 1)?;
    // Drawn as the crowd draws: the members it culls and plays by VAT as it does.
    renderer.set_vat(device, &crowd.animator, crowd.vat())?;
    renderer.set_lod_tint(queue, crowd.lod_tint());
    let camera = orbit.camera(width as f32 / height as f32);
    renderer.set_camera(queue, &camera);
    ground.set_camera(queue, &camera);
    if let Some(p) = &props {
        p.set_camera(queue, &camera);
    }
    if let Some(f) = &footprints {
        f.set_view(queue, &camera, crowd.footprint_time());
    }
    let mut encoder = device.create_command_encoder(&Default::default());
    renderer.encode(&mut encoder, &crowd.animator);
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        ground.draw(&mut pass);
        if let Some(f) = &footprints {
            f.draw(&mut pass);
        }
        renderer.draw_visible(&mut pass, &crowd.animator)?;
        if let Some(p) = &props {
            p.draw(&mut pass, &crowd.animator);
        }
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(path, width, height, &target.read_rgba(device, queue)?)
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gpu.is_none() {
            if let Err(e) = self.init(event_loop) {
                self.fail(event_loop, e);
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let Some(g) = self.gpu.as_mut() {
                    g.config.width = size.width;
                    g.config.height = size.height;
                    if size.width > 0 && size.height > 0 {
                        g.surface.configure(&g.device, &g.config);
                        g.depth = wgpu_anim::gpu::depth_view(&g.device, size.width, size.height);
                    }
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                self.key(&event.logical_key, event_loop)
            }
            WindowEvent::MouseInput { state, button: MouseButton::Left, .. } => {
                self.dragging = state == ElementState::Pressed
            }
            WindowEvent::CursorMoved { position, .. } => {
                if let (true, Some((x, y)), Some(g)) = (self.dragging, self.cursor, self.gpu.as_mut()) {
                    g.orbit.yaw -= (position.x - x) as f32 * 0.005;
                    g.orbit.pitch = (g.orbit.pitch + (position.y - y) as f32 * 0.005).clamp(0.05, 1.5);
                }
                self.cursor = Some((position.x, position.y));
            }
            WindowEvent::MouseWheel { delta, .. } => {
                if let Some(g) = self.gpu.as_mut() {
                    let lines = match delta {
                        MouseScrollDelta::LineDelta(_, y) => y,
                        MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                    };
                    g.orbit.distance = (g.orbit.distance * 0.9f32.powf(lines)).clamp(g.orbit.min_distance, 2000.0);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(g) = &self.gpu {
            g.window.request_redraw();
        }
    }
}

/// `--headless`: the same crowd and camera, rendered offscreen for `--frames` frames.
fn run_headless(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (mut device, mut queue) = wgpu_anim::gpu::headless_device()?;
    let mut lost = watch_device(&device);
    let (width, height) = (1280, 720);
    let count = args.count.unwrap_or(1_000);
    let mut crowd = Crowd::with_character(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc { count, footprints: !args.no_footprints, skinning: skinning(Some(args)), ..Default::default() },
        character(args)?,
    )?;
    choose_path(&device, &mut crowd.animator)?;
    crowd.animator.set_recovery(&device, Some(RECOVERY_INTERVAL));
    start_options(&queue, &mut crowd, args)?;
    let orbit = Orbit::new(&crowd);
    let frames = args.frames.unwrap_or(120);
    let wave_at = args.wave_at.unwrap_or(frames / 3);
    let started = Instant::now();
    for frame in 0..frames {
        if frame == wave_at {
            wave(&mut crowd);
        }
        if args.lose_device_at == Some(frame) {
            println!("--lose-device-at {frame}: destroying the device");
            device.destroy();
            // A destroyed device reports its loss once its queue is empty.
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
        }
        if lost.load(Ordering::Acquire) {
            let rebuilding = Instant::now();
            (device, queue) = wgpu_anim::gpu::headless_device()?;
            let rebuilt = crowd.rebuild(
                &device,
                &queue,
                OffscreenTarget::COLOR_FORMAT,
                Some(OffscreenTarget::DEPTH_FORMAT),
                1,
            )?;
            report_rebuild(&rebuilt, crowd.animator.recovery_frames(), rebuilding);
            crowd = rebuilt;
            lost = watch_device(&device);
        }
        // The camera first, as the window does: the update culls against it.
        crowd.set_camera(&queue, &orbit.camera(width as f32 / height as f32));
        crowd.update(&queue, 1.0 / 60.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
    }
    device.poll(wgpu::PollType::wait_indefinitely())?;
    println!(
        "{count} characters ({}), {frames} animation frames in {:.1} ms",
        crowd.character.name,
        started.elapsed().as_secs_f64() * 1e3
    );
    if let Some(n) = crowd.machine_counts() {
        println!("state machine, frame {}: {n}", n.frame);
    }
    if let Some(path) = &args.screenshot {
        screenshot(&device, &queue, &crowd, &orbit, width, height, path)?;
        println!("saved {}", path.display());
    }
    Ok(())
}

fn main() {
    let mut args = Args::parse();
    if args.screenshot.is_some() && args.frames.is_none() {
        args.frames = Some(120);
    }
    if args.headless {
        if let Err(e) = run_headless(&args) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        return;
    }
    let result = EventLoop::new().map_err(|e| e.to_string()).and_then(|event_loop| {
        let mut app = App { args: Some(args), ..Default::default() };
        event_loop.run_app(&mut app).map_err(|e| e.to_string())?;
        app.error.map_or(Ok(()), Err)
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
