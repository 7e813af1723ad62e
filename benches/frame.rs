//! One animation frame for 1k, 4k and 16k built-in characters — each playing one clip, or each
//! evaluating the 2D locomotion blend space with a quarter of them mid-transition — the GPU path
//! beside the CPU mirror on one thread, then a table with per-pass GPU times (timestamp queries, where the adapter has
//! them), dispatches per frame and CPU encode time.
//!
//! ```text
//! cargo bench --bench frame                          # criterion timings + the table
//! WGPU_ANIM_BENCH_COUNTS=1000,64000 cargo bench --bench frame
//! ```
//! On a software adapter (lavapipe) GPU times are CPU times in disguise: compare ratios within a
//! run, not absolute figures.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};
use wgpu_anim::cpu;
use wgpu_anim::gpu::Transition;
use wgpu_anim::gpu::{PassTimer, headless_device};
use wgpu_anim::layout::{BlendList, GpuClock, GpuFrame, GpuInstance, LocalPose};
use wgpu_anim::math::Affine;
use wgpu_anim::shaders::Stage;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, mannequin};

fn counts() -> Vec<u32> {
    std::env::var("WGPU_ANIM_BENCH_COUNTS")
        .ok()
        .and_then(|s| {
            s.split(',')
                .map(|x| x.trim().parse().ok())
                .collect::<Option<Vec<u32>>>()
        })
        .unwrap_or_else(|| vec![1_000, 4_000, 16_000])
}

/// What every character evaluates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// One clip each.
    SingleClip,
    /// The built-in 2D locomotion blend space (six clips, freeform directional) at its own
    /// velocity, with a cross-fade between two velocities running on a quarter of the crowd.
    Locomotion,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::SingleClip => "single-clip",
            Workload::Locomotion => "locomotion-2d",
        }
    }
}

/// A crowd of `n` mannequins, each on its own clip (or velocity), phase and rate.
fn crowd(device: &wgpu::Device, queue: &wgpu::Queue, n: u32, workload: Workload) -> Animator {
    let (lib, _, clips) = mannequin::library();
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            max_joints: None,
        },
    )
    .expect("animator");
    let tree = lib.blend.tree_id(mannequin::LOCOMOTION).expect("locomotion tree");
    for i in 0..n {
        let clip = clips[i as usize % clips.len()];
        let (u, v) = ((i as f32 * 0.618).fract(), (i as f32 * 0.377).fract());
        let velocity = glam::Vec2::from_angle(u * std::f32::consts::TAU) * v * 3.5;
        let desc = match workload {
            Workload::SingleClip => InstanceDesc {
                time: u * 3.0,
                rate: 0.8 + v * 0.4,
                ..InstanceDesc::new(clip)
            },
            Workload::Locomotion => InstanceDesc {
                time: u,
                ..InstanceDesc::tree(tree, [velocity.x, velocity.y, 0.0, 0.0])
            },
        };
        a.add_instance(&desc).expect("instance");
        if workload == Workload::Locomotion && i % 4 == 0 {
            // A long cross-fade from the locomotion blend to idle, running throughout the bench.
            a.play(i as usize, &InstanceDesc::new(clips[0]), Some(Transition::linear(1e6)))
                .expect("transition");
        }
    }
    a.prepare(queue, 0.0);
    a
}

fn gpu_frame(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) {
    a.prepare(queue, 1.0 / 60.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
}

struct CpuState {
    frame: GpuFrame,
    instances: Vec<GpuInstance>,
    clocks: Vec<GpuClock>,
    lists: Vec<BlendList>,
    local: Vec<LocalPose>,
    model: Vec<Affine>,
    palette: Vec<Affine>,
}

fn cpu_frame(lib: &wgpu_anim::AnimationLibrary, s: &mut CpuState) {
    cpu::clock(lib, &s.frame, &s.instances, &mut s.clocks, &mut s.lists);
    cpu::sample(lib, &s.frame, &s.instances, &s.lists, &mut s.local);
    cpu::local_to_model(lib, &s.frame, &s.instances, &mut s.local, &mut s.model);
    cpu::palette(lib, &s.frame, &s.instances, &s.model, &mut s.palette);
}

fn bench(c: &mut Criterion) {
    let (device, queue) = headless_device().expect("a wgpu adapter (install mesa-vulkan-drivers without a GPU)");
    let mut rows = Vec::new();
    let mut group = c.benchmark_group("frame");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let runs = [Workload::SingleClip, Workload::Locomotion]
        .into_iter()
        .flat_map(|w| counts().into_iter().map(move |n| (w, n)));
    for (workload, n) in runs {
        let mut a = crowd(&device, &queue, n, workload);
        let id = |what: &str| BenchmarkId::new(format!("{}/{what}", workload.name()), n);
        group.bench_with_input(id("gpu"), &n, |b, _| b.iter(|| gpu_frame(&device, &queue, &mut a)));
        group.bench_with_input(id("cpu_encode"), &n, |b, _| {
            b.iter(|| {
                let mut encoder = device.create_command_encoder(&Default::default());
                a.encode(&mut encoder);
                encoder.finish()
            })
        });
        let (clocks, pose) = a.read_back(&device, &queue).expect("readback");
        let mut s = CpuState {
            frame: GpuFrame {
                dt: 1.0 / 60.0,
                instance_count: n,
                snapshot_offset: a.joint_count(),
                _pad: 0,
            },
            instances: a.instances().to_vec(),
            lists: a.read_blend_lists(&device, &queue).expect("readback"),
            clocks,
            local: [pose.local.clone(), pose.local.clone(), pose.local].concat(),
            model: pose.model,
            palette: pose.palette,
        };
        let lib = a.library().clone();
        group.bench_with_input(id("cpu_mirror_1_thread"), &n, |b, _| b.iter(|| cpu_frame(&lib, &mut s)));
        rows.push(measure(&device, &queue, &mut a, &lib, &mut s, workload));
    }
    group.finish();
    print_table(&device, &rows);
}

struct Row {
    workload: Workload,
    characters: u32,
    joints: u32,
    pass_ms: Option<Vec<f64>>,
    frame_ms: f64,
    encode_us: f64,
    cpu_ms: f64,
    dispatches: u32,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    lib: &wgpu_anim::AnimationLibrary,
    s: &mut CpuState,
    workload: Workload,
) -> Row {
    let timer = PassTimer::new(device, queue, a.dispatches_per_frame());
    let frames = 15;
    let (mut passes, mut frame, mut encode, mut cpu_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        let start = Instant::now();
        a.prepare(queue, 1.0 / 60.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_timed(&mut encoder, timer.as_ref());
        if let Some(t) = &timer {
            t.resolve(&mut encoder);
        }
        let cmd = encoder.finish();
        encode.push(start.elapsed().as_secs_f64() * 1e6);
        queue.submit([cmd]);
        device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        frame.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(t) = &timer {
            passes.push(t.read_ms(device, queue).expect("timestamps"));
        }
        let start = Instant::now();
        cpu_frame(lib, s);
        cpu_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let pass_ms = timer.map(|t| {
        (0..t.passes() as usize)
            .map(|k| median(passes.iter().map(|p| p[k]).collect()))
            .collect()
    });
    Row {
        workload,
        characters: a.instance_count() as u32,
        joints: a.joint_count(),
        pass_ms,
        frame_ms: median(frame),
        encode_us: median(encode),
        cpu_ms: median(cpu_ms),
        dispatches: a.dispatches_per_frame(),
    }
}

fn print_table(device: &wgpu::Device, rows: &[Row]) {
    let _ = device;
    let names: Vec<&str> = Stage::COMPUTE.iter().map(|s| s.name()).collect();
    println!("\nOne animation frame (medians of 15 frames); GPU pass times from timestamp queries");
    print!("{:>14} {:>10} {:>8}", "workload", "characters", "joints");
    for n in &names {
        print!(" {:>15}", format!("{n} ms"));
    }
    println!(
        " {:>12} {:>12} {:>10} {:>14} {:>12}",
        "GPU sum ms", "frame ms", "dispatches", "CPU encode µs", "CPU-1 ms"
    );
    for r in rows {
        print!("{:>14} {:>10} {:>8}", r.workload.name(), r.characters, r.joints);
        match &r.pass_ms {
            Some(p) => {
                for ms in p {
                    print!(" {ms:>15.3}");
                }
                print!(" {:>12.3}", p.iter().sum::<f64>());
            }
            None => {
                for _ in &names {
                    print!(" {:>15}", "n/a");
                }
                print!(" {:>12}", "n/a");
            }
        }
        println!(
            " {:>12.3} {:>10} {:>14.1} {:>12.3}",
            r.frame_ms, r.dispatches, r.encode_us, r.cpu_ms
        );
    }
    println!(
        "(frame ms: prepare + encode + submit + wait, wall clock; CPU-1: the CPU mirror of all four stages on one thread)"
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
