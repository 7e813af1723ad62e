//! One animation frame for 1k, 4k and 16k built-in characters — each playing one clip, or each
//! evaluating the 2D locomotion blend space with a quarter of them mid-transition — the GPU path
//! beside the CPU mirror on one thread and on every core: criterion timings, then the table of
//! `wgpu-anim bench` (per-pass times from timestamp queries where the adapter has them,
//! dispatches per frame, CPU encode time, bytes per joint). Both share `wgpu_anim::bench`.
//!
//! ```text
//! cargo bench --bench frame                          # criterion timings + the table
//! WGPU_ANIM_BENCH_COUNTS=1000,64000 cargo bench --bench frame
//! ```
//! On a software adapter (lavapipe) GPU times are CPU times in disguise: compare ratios within a
//! run, not absolute figures.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::Duration;
use wgpu_anim::bench::{self, Config, CpuCrowd, Workload};
use wgpu_anim::gpu::headless_device;
use wgpu_anim::offline::compress::ClipFormat;

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

fn frame(c: &mut Criterion) {
    let (device, queue) = headless_device().expect("a wgpu adapter (install mesa-vulkan-drivers without a GPU)");
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut group = c.benchmark_group("frame");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let runs = ClipFormat::ALL.into_iter().flat_map(|f| {
        Workload::ALL
            .into_iter()
            .flat_map(move |w| counts().into_iter().map(move |n| (f, w, n)))
    });
    for (format, workload, n) in runs {
        let mut a = bench::crowd(&device, &queue, n, workload, format).expect("crowd");
        bench::gpu_frame(&device, &queue, &mut a).expect("frame");
        let id = |what: &str| BenchmarkId::new(format!("{}/{}/{what}", format.name(), workload.name()), n);
        group.bench_with_input(id("gpu"), &n, |b, _| {
            b.iter(|| bench::gpu_frame(&device, &queue, &mut a).expect("frame"))
        });
        group.bench_with_input(id("cpu_encode"), &n, |b, _| {
            b.iter(|| {
                let mut encoder = device.create_command_encoder(&Default::default());
                a.encode(&mut encoder).expect("a prepared frame");
                encoder.finish()
            })
        });
        let lib = a.controller().library().clone();
        let mut one = CpuCrowd::from_gpu(&device, &queue, &a, 1).expect("readback");
        group.bench_with_input(id("cpu_mirror_1_thread"), &n, |b, _| b.iter(|| one.frame(&lib)));
        let mut all = CpuCrowd::from_gpu(&device, &queue, &a, threads).expect("readback");
        group.bench_with_input(id("cpu_mirror_all_threads"), &n, |b, _| b.iter(|| all.frame(&lib)));
    }
    group.finish();

    let config = Config {
        counts: counts(),
        frames: 15,
        ..Config::default()
    };
    let report = bench::run(&device, &queue, &config, &mut |line| eprintln!("{line}")).expect("bench");
    println!();
    print!("{}", bench::markdown_report(&report));
}

criterion_group!(benches, frame);
criterion_main!(benches);
