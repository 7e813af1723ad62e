//! GPU crowd logic driving state machines: a compute pass of this example's own sets each
//! member's `speed` parameter from its distance to a point moving round the crowd, before the
//! animator's passes; every member's machine (idle, walk, run by speed) then decides on the GPU
//! what it plays. No parameter is set from the CPU after the first frame. Prints how many
//! members are in each state as the point goes round (read back without stalls) and saves the
//! last frame.
//!
//! ```text
//! cargo run --release --example steering -- [--members N] [--frames N] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::path::PathBuf;
use wgpu::util::DeviceExt;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, headless_device};
use wgpu_anim::machine::{Condition, Motion, Parameter, State, StateMachine, Transition};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LibraryBuilder, SkinnedRenderer, mannequin};

/// Members steered by a compute pass.
#[derive(Parser)]
#[command(name = "steering")]
struct Args {
    /// Members, on a square grid.
    #[arg(long, value_name = "N", default_value_t = 100)]
    members: u32,
    /// Frames of 1/30 s.
    #[arg(long, value_name = "N", default_value_t = 120)]
    frames: u32,
    /// Where to write the last frame's picture.
    #[arg(long, value_name = "PATH", default_value = "steering.png")]
    out: PathBuf,
}

/// The pass: each member's speed parameter (slot `SPEED`) is 0 beyond 6 m of the point, rising
/// to 4 m/s at it; the slots are the animator's page's machine parameters, bound as given.
const STEER: &str = r"
struct Steer { point: vec4<f32>, members: u32, speed_slot: u32 }
@group(0) @binding(0) var<uniform> steer: Steer;
@group(0) @binding(1) var<storage, read> positions: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> machine_parameters: array<array<u32, 16>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= steer.members) {
        return;
    }
    let d = distance(positions[i].xz, steer.point.xz);
    let speed = 4.0 * clamp(1.0 - d / 6.0, 0.0, 1.0);
    machine_parameters[i][steer.speed_slot] = bitcast<u32>(speed);
}
";

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Idle below 0.5 m/s, walk up to 2.5, run above; 0.25 s cross-fades.
fn machine() -> StateMachine {
    StateMachine {
        name: "steered".into(),
        parameters: vec![Parameter::float("speed", 0.0)],
        states: vec![
            State::new("idle", Motion::clip("idle")),
            State::new("walk", Motion::clip("walk")),
            State::new("run", Motion::clip("run")),
        ],
        entry: "idle".into(),
        transitions: vec![
            Transition::new("idle", "walk").when(Condition::greater("speed", 0.5)).duration(0.25),
            Transition::new("walk", "idle").when(Condition::less("speed", 0.5)).duration(0.25),
            Transition::new("walk", "run").when(Condition::greater("speed", 2.5)).duration(0.25),
            Transition::new("run", "walk").when(Condition::less("speed", 2.5)).duration(0.25),
        ],
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = headless_device()?;
    let skeleton = mannequin::skeleton();
    let mesh = mannequin::mesh(&skeleton);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton);
    let clips: Vec<_> = mannequin::clips(b.skeleton(s)?).iter().map(|c| b.add_clip(s, c)).collect::<Result<_, _>>()?;
    let id = b.add_state_machine(s, &machine())?;
    let library = b.build();
    let n = args.members.max(1);
    let desc = AnimatorDesc::default().with_max_instances(n).with_page_instances(Some(n));
    let mut animator = Animator::new(&device, &library, &desc)?;
    let side = (n as f32).sqrt().ceil() as u32;
    let mut positions = Vec::new();
    for k in 0..n {
        let p = Vec3::new((k % side) as f32 - side as f32 / 2.0, 0.0, (k / side) as f32 - side as f32 / 2.0) * 1.2;
        positions.push(p.extend(0.0));
        let world = Mat4::from_rotation_translation(Quat::from_rotation_y(0.3), p);
        animator.controller_mut().add_instance(&InstanceDesc::new(clips[0]).with_world(world))?;
        animator.controller_mut().set_machine(k as usize, Some(id))?;
    }
    let (speed_slot, _) = library.machines().parameter(id, "speed")?;
    let everyone: Vec<usize> = (0..n as usize).collect();
    animator.watch_machines(&device, &everyone)?;

    // The steering pass over the page's parameter slots (one page holds every member).
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("steer"),
        source: wgpu::ShaderSource::Wgsl(STEER.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("steer"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("steer"),
        size: 32,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let positions = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("positions"),
        contents: bytemuck::cast_slice(&positions),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let slots = animator.page_machine_parameter_buffer(0).ok_or("the animator has no page")?;
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("steer"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: positions.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::Buffer(slots) },
        ],
    });

    let (width, height) = (1200, 700);
    let target = OffscreenTarget::new(&device, width, height)?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        s,
        &mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )?;
    let extent = side as f32 * 1.2;
    let camera = Camera::look_at(
        Vec3::new(0.0, extent * 0.9, extent * 1.1),
        Vec3::ZERO,
        0.8,
        width as f32 / height as f32,
        0.1,
        100.0,
    );
    renderer.set_camera(&queue, &camera);
    let names = library.machines().state_names(id)?;
    let dt = 1.0 / 30.0;
    for f in 0..args.frames {
        // The point goes round the crowd once every 4 s.
        let angle = f as f32 * dt * std::f32::consts::TAU / 4.0;
        let point = Vec3::new(angle.cos(), 0.0, angle.sin()) * extent * 0.35;
        let mut data = [0u32; 8];
        data[..4].copy_from_slice(bytemuck::cast_slice(&point.extend(0.0).to_array()));
        data[4] = n;
        data[5] = speed_slot as u32;
        queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&data));
        animator.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            // Before the animator's passes: the clock pass reads what this one wrote.
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
        }
        animator.encode(&mut encoder)?;
        let last = f + 1 == args.frames;
        if last {
            let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
            renderer.draw(&mut pass, &animator, 0..n)?;
        }
        queue.submit([encoder.finish()]);
        if last {
            animator.wait_readbacks();
        }
        for r in animator.take_readbacks().iter().filter(|r| r.frame % 30 == 0 || last) {
            let mut counts = vec![0; names.len()];
            for m in &r.machines {
                if let Some(s) = m.playing() {
                    counts[s as usize] += 1;
                }
            }
            let counts: Vec<String> = names.iter().zip(&counts).map(|(s, c)| format!("{s} {c}")).collect();
            println!("frame {:>4}: {}", r.frame, counts.join(", "));
        }
    }
    wgpu_anim::image::save_png(&args.out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!("saved {}", args.out.display());
    Ok(())
}
