//! The benchmark library on a tiny configuration: every row is there and consistent, and the
//! JSON of the rows round-trips.

use wgpu_anim::bench::{self, Config, PathKind, Row, Workload};
use wgpu_anim::offline::compress::ClipFormat;

#[test]
fn tiny_bench_rows_are_consistent_and_round_trip() {
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).expect("a wgpu adapter");
    let config = Config {
        counts: vec![50, 120],
        frames: 3,
        warmup: 1,
        workloads: Workload::ALL.to_vec(),
        clip_formats: ClipFormat::ALL.to_vec(),
        paths: PathKind::ALL.to_vec(),
        threads: Some(2),
        skinning: true,
        morph: true,
        transitions: true,
        view_counts: vec![100, 1_000],
        character_threads: Vec::new(),
        extras_at_every_count: false,
    };
    // The ways of running a character the GPU rows take: on a CPU adapter a thread and a SIMD
    // group per character.
    let ways = bench::threads_to_run(&device, &config);
    assert_eq!(ways.len(), if bench::is_cpu_adapter(&device) { 2 } else { 1 });
    let gpu_paths = PathKind::ALL.iter().filter(|p| p.is_gpu()).count();
    let mut lines = Vec::new();
    let report = bench::run(&device, &queue, &config, &mut |l| lines.push(l.to_string())).expect("bench runs");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert_eq!(
        report.rows.len(),
        2 * ClipFormat::ALL.len() * Workload::ALL.len() * (PathKind::ALL.len() - gpu_paths + gpu_paths * ways.len())
    );
    assert_eq!(
        lines.len(),
        report.rows.len()
            + report.formats.len()
            + report.paths.len()
            + report.machines.len()
            + report.skinning.len()
            + report.morph.len()
            + report.transitions.len()
            + report.culling.len(),
        "one progress line per configuration and per format, path, machine, skinning, morph, transition and culling comparison"
    );
    assert!(
        lines[1].contains("left]"),
        "progress gives an estimate of the time left: {}",
        lines[1]
    );
    // The tables beside the rows run at the smallest count only.
    let extra = [config.counts[0]];
    // Linear against dual-quaternion skinning, both animated and drawn.
    assert_eq!(report.skinning.len(), extra.len());
    for (c, &n) in report.skinning.iter().zip(&extra) {
        assert_eq!((c.characters, c.pairs), (n, config.frames));
        assert!(c.vertices > 0 && c.ratio > 0.0, "{c:?}");
        for ms in [c.linear_palette_ms, c.dual_palette_ms, c.linear_draw_ms, c.dual_draw_ms] {
            assert!(ms > 0.0, "{c:?}");
        }
        assert!(
            c.linear_frame_ms > c.linear_draw_ms && c.dual_frame_ms > c.dual_draw_ms,
            "{c:?}"
        );
        assert_eq!(
            (c.linear_palette_bytes_per_joint, c.dual_palette_bytes_per_joint),
            (48, 112)
        );
        // The mannequin has no scale: the rigid variant reads a dual quaternion's 32 bytes.
        assert_eq!((c.linear_bytes_per_influence, c.dual_bytes_per_influence), (48, 32));
    }
    assert!(bench::skinning_table(&report.skinning).lines().count() == 2 + extra.len());
    // With and without morph targets at each count: the mannequin's two targets, each moving a
    // part of its vertices.
    assert_eq!(report.morph.len(), extra.len());
    for (c, &n) in report.morph.iter().zip(&extra) {
        assert_eq!((c.characters, c.pairs, c.targets), (n, config.frames, 2));
        assert!(c.entries > 0 && c.entries < c.vertices, "{c:?}");
        assert!(c.plain_draw_ms > 0.0 && c.morph_draw_ms > 0.0 && c.ratio > 0.0, "{c:?}");
        assert!(
            c.plain_frame_ms > c.plain_draw_ms && c.morph_frame_ms > c.morph_draw_ms,
            "{c:?}"
        );
        assert!(c.ns_per_entry.is_finite() && c.compute_pass_ms > 0.0, "{c:?}");
    }
    assert!(bench::morph_table(&report.morph).lines().count() == 2 + extra.len());
    // Both formats and the staged path: the sample pass of each in alternate frames, where the
    // device has timestamps.
    if device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
        assert_eq!(report.formats.len(), Workload::ALL.len() * extra.len() * ways.len());
        for c in &report.formats {
            assert_eq!(c.pairs, config.frames);
            assert!(
                c.raw_sample_ms > 0.0 && c.compressed_sample_ms > 0.0 && c.ratio > 0.0,
                "{c:?}"
            );
        }
        assert_eq!(
            bench::formats_table(&report.formats).lines().count(),
            2 + report.formats.len()
        );
        // Both GPU paths: the fused against the staged on one crowd in alternate frames, every
        // workload, clip format and count (the mannequin fits the fused path's limits).
        assert_eq!(
            report.paths.len(),
            ClipFormat::ALL.len() * Workload::ALL.len() * extra.len() * ways.len()
        );
        for c in &report.paths {
            assert_eq!(c.pairs, config.frames);
            assert!(c.staged_ms > 0.0 && c.fused_ms > 0.0 && c.ratio > 0.0, "{c:?}");
        }
        assert_eq!(
            bench::paths_table(&report.paths).lines().count(),
            2 + report.paths.len()
        );
        // The state-machine crowd against single-clip in alternate frames, on each GPU path, clip
        // format and count.
        assert_eq!(
            report.machines.len(),
            gpu_paths * ClipFormat::ALL.len() * extra.len() * ways.len()
        );
        for c in &report.machines {
            assert_eq!((c.characters, c.pairs), (extra[0], config.frames));
            assert!(c.single_clip_ms > 0.0 && c.machine_ms > 0.0 && c.ratio > 0.0, "{c:?}");
        }
        assert_eq!(
            bench::machines_table(&report.machines).lines().count(),
            2 + report.machines.len()
        );
        // Cross-fades against inertialized transitions at each count.
        assert_eq!(report.transitions.len(), extra.len());
        for (c, &n) in report.transitions.iter().zip(&extra) {
            assert_eq!(
                (c.characters, c.transitioning, c.frames),
                (n, n.div_ceil(4), config.frames)
            );
            for ms in [c.quiet_sample_ms, c.cross_fade_sample_ms, c.inertialized_sample_ms] {
                assert!(ms > 0.0, "{c:?}");
            }
            assert!(c.ratio.is_finite(), "{c:?}");
        }
        assert_eq!(
            bench::transitions_table(&report.transitions).lines().count(),
            2 + extra.len()
        );
        // The crowd-view workload at each size: part of the field evaluated, by the same
        // commands whatever the size.
        assert_eq!(report.culling.len(), config.view_counts.len());
        for (c, &n) in report.culling.iter().zip(&config.view_counts) {
            assert_eq!((c.characters, c.frames), (n, config.frames));
            assert!(c.evaluated > 0 && c.evaluated < n, "{c:?}");
            for ms in [
                c.all_gpu_ms,
                c.culled_gpu_ms,
                c.tenth_gpu_ms,
                c.lod_gpu_ms,
                c.vat_gpu_ms,
                c.all_encode_ms,
                c.culled_encode_ms,
            ] {
                assert!(ms > 0.0, "{c:?}");
            }
            assert!(c.culled_ratio.is_finite() && c.tenth_ratio.is_finite(), "{c:?}");
            assert_eq!(c.culled_dispatches, report.culling[0].culled_dispatches, "{c:?}");
        }
        assert_eq!(
            bench::culling_table(&report.culling).lines().count(),
            2 + config.view_counts.len()
        );
    }
    for (f, w) in ClipFormat::ALL
        .into_iter()
        .flat_map(|f| Workload::ALL.into_iter().map(move |w| (f, w)))
    {
        for p in PathKind::ALL {
            let rows: Vec<&Row> = report
                .rows
                .iter()
                .filter(|r| r.clip_format == f.name() && r.workload == w.name() && r.path == p)
                .collect();
            let per_count = if p.is_gpu() { ways.len() } else { 1 };
            assert_eq!(rows.len(), 2 * per_count, "{} {} {}", f.name(), w.name(), p.name());
            let first = rows[0];
            for r in &rows {
                assert_eq!(
                    r.dispatches, first.dispatches,
                    "dispatches per frame do not depend on the count"
                );
                assert!(r.bytes_per_joint_per_character > 0.0 && r.bytes_per_joint_shared > 0.0);
                assert_eq!(r.bytes_per_joint_per_character, first.bytes_per_joint_per_character);
                assert_eq!(r.bytes_per_joint_shared, first.bytes_per_joint_shared);
                assert!(r.frame_ms > 0.0 && r.characters_per_ms > 0.0);
                let passes = r.pass_ms.as_ref();
                if p.is_gpu() {
                    // IK adds a pass to the staged path; the fused pass solves it in place.
                    let expected = match (p, w) {
                        (PathKind::GpuFused, _) => 2,
                        (_, Workload::Ik) => 5,
                        _ => 4,
                    };
                    assert_eq!(r.dispatches, Some(expected));
                    assert_eq!(r.pages, Some(1));
                    assert!(r.cpu_encode_ms.is_some() && r.edit_encode_ms.is_some());
                    // An ordinary frame uploads the page's frame uniform, and with the
                    // state-machine workload the two float parameter slots (4 bytes each) of the
                    // tenth of the crowd whose parameters change; editing 1 % of the characters
                    // adds their instances (256 bytes each), nothing between them.
                    let instance = size_of::<wgpu_anim::layout::GpuInstance>() as u64;
                    let mut frame = size_of::<wgpu_anim::layout::GpuFrame>() as u64;
                    if w == Workload::StateMachine {
                        let n = u64::from(r.characters);
                        let changed = r.upload_bytes.unwrap_or(0).saturating_sub(frame) / 8;
                        assert!(
                            (n / 10..=n.div_ceil(10)).contains(&changed),
                            "{n} characters, {:?} bytes uploaded",
                            r.upload_bytes
                        );
                        frame += 8 * changed;
                    }
                    let edits = u64::from(r.characters).div_ceil(100);
                    assert_eq!(r.upload_bytes, Some(frame));
                    assert!(
                        r.edit_upload_bytes
                            .is_some_and(|b| b > frame - 8 * u64::from(w == Workload::StateMachine)
                                && b <= frame + 8 + edits * instance),
                        "{:?}",
                        r.edit_upload_bytes
                    );
                    assert_eq!(r.gpu_ms.is_some(), passes.is_some());
                    // The frame with read-back on is measured too.
                    assert!(r.readback_frame_ms.is_some_and(|f| f > 0.0));
                    assert_eq!(r.readback_gpu_ms.is_some(), r.gpu_ms.is_some());
                } else {
                    assert_eq!(r.gpu_ms, None, "CPU rows have no GPU time");
                    assert_eq!(r.readback_frame_ms, None);
                    assert_eq!(r.dispatches, None);
                    assert_eq!(passes.map(|m| m.len()), Some(4));
                }
            }
        }
    }
    // Per-character traffic follows the layouts: the fused path writes far less per joint than
    // the staged one, and layers (mesh-space deltas) add to the staged path's.
    let row = |f: ClipFormat, w: Workload, p: PathKind| {
        report
            .rows
            .iter()
            .find(|r| r.clip_format == f.name() && r.workload == w.name() && r.path == p)
            .unwrap()
    };
    let per_char = |w: Workload, p: PathKind| row(ClipFormat::Raw, w, p).bytes_per_joint_per_character;
    // Compressed clips read more shared bytes than raw ones: per joint and channel, a track header
    // and seven or more words of the packed frames, where the mannequin's raw clips (their key
    // times searched once per character and sample) read one unit of the joint's three headers
    // and two 16-byte keys per channel. The per-character bytes are the same.
    for w in Workload::ALL {
        for p in PathKind::ALL {
            let (raw, packed) = (row(ClipFormat::Raw, w, p), row(ClipFormat::Compressed, w, p));
            assert!(
                raw.bytes_per_joint_shared > 0.0 && packed.bytes_per_joint_shared > raw.bytes_per_joint_shared,
                "{} {}: {} compressed, {} raw",
                w.name(),
                p.name(),
                packed.bytes_per_joint_shared,
                raw.bytes_per_joint_shared
            );
            assert_eq!(packed.bytes_per_joint_per_character, raw.bytes_per_joint_per_character);
        }
    }
    for w in Workload::ALL {
        assert!(
            per_char(w, PathKind::GpuFused) < per_char(w, PathKind::GpuStaged) / 2.0,
            "{}",
            w.name()
        );
        assert_eq!(
            per_char(w, PathKind::GpuStaged),
            per_char(w, PathKind::Cpu1),
            "the mirror moves the same buffers"
        );
    }
    assert!(per_char(Workload::Layered, PathKind::GpuStaged) > per_char(Workload::SingleClip, PathKind::GpuStaged));

    let json = serde_json::to_string(&report.rows).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &value[0];
    for field in [
        "workload",
        "clip_format",
        "path",
        "characters",
        "gpu_ms",
        "frame_ms",
        "cpu_encode_ms",
        "dispatches",
        "bytes_per_joint_per_character",
        "characters_per_ms",
        "device",
        "date",
        "pass_ms",
        "character_threads",
        "check",
    ] {
        assert!(first.get(field).is_some(), "JSON row lacks {field}: {first}");
    }
    let paths: Vec<&str> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"gpu-staged") && paths.contains(&"cpu-1") && paths.contains(&"cpu-all"));
    let back: Vec<Row> = serde_json::from_str(&json).unwrap();
    assert_eq!(back.len(), report.rows.len());
    for (b, r) in back.iter().zip(&report.rows) {
        same(&serde_json::to_value(b).unwrap(), &serde_json::to_value(r).unwrap());
    }
}

/// The same JSON, numbers equal to within parsing rounding.
fn same(a: &serde_json::Value, b: &serde_json::Value) {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{x} != {y}");
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
            for (k, v) in x {
                same(v, &y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len());
            for (u, v) in x.iter().zip(y) {
                same(u, v);
            }
        }
        _ => assert_eq!(a, b),
    }
}

#[test]
fn fused_traffic_is_the_palette_the_instance_sections_a_frame_reads_and_the_blend_list() {
    use wgpu_anim::layout::{BlendList, GpuLayer, GpuLayerDef, KEEP_POSE, layer_mode, source_kind};
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let defs: Vec<GpuLayerDef> = [
        layer_mode::OVERRIDE,
        layer_mode::ADDITIVE_LOCAL,
        layer_mode::ADDITIVE_MESH,
    ]
    .map(|mode| GpuLayerDef {
        mode,
        mask: wgpu_anim::layout::NO_MASK,
        clip: clips[0].index(),
        time_parameter: wgpu_anim::layout::NO_TIME_PARAMETER,
        ..Default::default()
    })
    .to_vec();
    // The per-character bytes per joint of a frame of `inst`, and the bytes of its blend list as
    // the clock writes it: its head, its layers with a layer on, its `count` samples.
    let traffic = |inst: &wgpu_anim::layout::GpuInstance| {
        let mut list = BlendList::default();
        wgpu_anim::cpu::advance_instance(&lib, &defs, inst, &Default::default(), 0.1, &mut list).unwrap();
        let layers = if inst.flags & (0..3).map(|k| wgpu_anim::layout::LAYER_ON << k).sum::<u32>() != 0 {
            48.0
        } else {
            0.0
        };
        let list_bytes = 16.0 + layers + 16.0 * f64::from(list.count);
        (
            bench::traffic(&lib, &[*inst], &[list], PathKind::GpuFused).per_character,
            list_bytes,
        )
    };
    let mut inst = wgpu_anim::cpu::clip_instance(&lib, clips[1], 0).unwrap();
    let joints = f64::from(inst.joint_count);
    // The palette; 64 bytes of instance read by the clock pass and its 16-byte header by the
    // fused one; the clock's target unit (16 bytes) read and written; the blend list written by
    // the clock and read by the fused pass: its head and one sample. Within the 52-byte aim
    // (bench::PER_CHARACTER_TARGET) for the mannequin.
    let (plain, list) = traffic(&inst);
    assert_eq!(list, 32.0);
    assert_eq!(plain, 48.0 + (64.0 + 2.0 * 16.0 + 16.0 + 2.0 * list) / joints);
    assert!(plain <= bench::PER_CHARACTER_TARGET, "{plain} bytes per joint");
    // A transition: its 32-byte section too, the clock's source and transition units in and
    // out, and the list its source's sample.
    inst.flags |= source_kind::CLIP;
    inst.source_clip = clips[2].index();
    inst.transition_duration = 0.5;
    let (with_transition, list) = traffic(&inst);
    assert_eq!(list, 48.0);
    assert_eq!(with_transition, plain + (32.0 + 2.0 * 2.0 * 16.0 + 2.0 * 16.0) / joints);
    // Three layers: their 64-byte section, the clock's unit of layers 1 and 2 in and out (the
    // transition's units hold the rest of their times), and the list's layers and samples; their
    // definitions are shared.
    for (k, def) in defs.iter().enumerate() {
        inst.layers[k] = GpuLayer {
            def: k as u32,
            weight: 1.0,
            ..Default::default()
        };
        inst.set_layer_flags(k, Some(def));
    }
    let (layered, list) = traffic(&inst);
    assert_eq!(
        layered,
        plain + (32.0 + 2.0 * 3.0 * 16.0 + 64.0 + 2.0 * (list - 32.0)) / joints
    );
    // The frame before an interrupting cross-fade writes the snapshot pose.
    inst.flags |= KEEP_POSE;
    assert_eq!(traffic(&inst).0, layered + 48.0);
}

#[test]
fn cpu_all_computes_what_cpu_1_computes() {
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).expect("a wgpu adapter");
    for w in Workload::ALL {
        let mut a = bench::crowd(&device, &queue, 37, w, ClipFormat::Compressed).unwrap();
        bench::gpu_frame(&device, &queue, &mut a).unwrap();
        let lib = a.controller().library().clone();
        let mut one = bench::CpuCrowd::from_gpu(&device, &queue, &a, 1).unwrap();
        let mut three = bench::CpuCrowd::from_gpu(&device, &queue, &a, 3).unwrap();
        assert_eq!(three.chunks(), 3);
        for _ in 0..3 {
            one.frame(&lib);
            three.frame(&lib);
        }
        assert_eq!(one.palettes(), three.palettes(), "{}", w.name());
        assert_eq!(one.palettes().len(), a.controller().joint_count() as usize);
    }
}

/// The state-machine crowd, settled and changing its parameters every frame, plays what the
/// single-clip crowd plays: character `i` in the state of clip `i % 6`, no transition running,
/// one clip in its blend list, the single-clip character's.
#[test]
fn the_state_machine_crowd_plays_the_single_clip_crowds_clips() {
    use wgpu_anim::layout::MACHINE_NONE;
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).expect("a wgpu adapter");
    let n = 60;
    let mut machines = bench::crowd(&device, &queue, n, Workload::StateMachine, ClipFormat::Raw).expect("a crowd");
    let mut single = bench::crowd(&device, &queue, n, Workload::SingleClip, ClipFormat::Raw).expect("a crowd");
    for _ in 0..3 {
        bench::gpu_frame(&device, &queue, &mut machines).unwrap();
        bench::gpu_frame(&device, &queue, &mut single).unwrap();
    }
    let (states, slots) = machines.read_machines_page(&device, &queue, 0).unwrap();
    let lists = machines.read_blend_lists(&device, &queue).unwrap();
    let single_lists = single.read_blend_lists(&device, &queue).unwrap();
    let names = wgpu_anim::mannequin::CLIP_NAMES;
    let id = machines.controller().machine(0).expect("a machine");
    let state_names = machines
        .controller()
        .library()
        .machines()
        .state_names(id)
        .unwrap()
        .to_vec();
    let mut changed = 0;
    for i in 0..n as usize {
        assert_eq!(
            state_names[states[i].current as usize],
            names[i % names.len()],
            "character {i}"
        );
        assert_eq!(states[i].transition, MACHINE_NONE, "character {i}");
        assert_eq!(lists[i].count, 1, "character {i}");
        assert_eq!(
            lists[i].samples[0].clip, single_lists[i].samples[0].clip,
            "character {i}"
        );
        // A direction moved off the whole degrees the crowd set: changed by a frame.
        changed += usize::from(f32::from_bits(slots[i][1]).fract() != 0.0);
    }
    assert!(
        changed > 0 && changed < n as usize,
        "{changed} of {n} characters' parameters changed"
    );
}

/// Timestamps read for another frame than the one measured: the check's answer is known. The
/// passes of a crowd of 8 characters against the frame of a crowd of 4,000 (on a CPU adapter, whose
/// passes are the work it does, far too little: timestamps written when the passes did not run),
/// and the other way round (more than the frame took, on any device where the large crowd's frame
/// is long enough to tell).
#[test]
fn timestamps_of_another_frame_fail_the_check() {
    use wgpu_anim::gpu::PassTimer;
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).expect("a wgpu adapter");
    if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
        eprintln!("skipped: the adapter has no timestamp queries");
        return;
    }
    let time = |n: u32| {
        let mut a = bench::crowd(&device, &queue, n, Workload::SingleClip, ClipFormat::Raw).expect("a crowd");
        let timer = PassTimer::new(&device, &queue, a.dispatches_per_page()).expect("a timer");
        let mut frames = Vec::new();
        for _ in 0..4 {
            a.prepare(&queue, bench::DT);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode_timed(&mut encoder, Some(&timer)).unwrap();
            timer.resolve(&mut encoder);
            let submitted = bench::FrameTime::start();
            queue.submit([encoder.finish()]);
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("the frame runs");
            let ms = timer.read_ms(&device, &queue).expect("timestamps");
            frames.push(submitted.done(ms.iter().sum()));
        }
        frames
    };
    let (small, large) = (time(8), time(4000));
    // Frames with `gpu`'s timestamps and `frame`'s wall and CPU times.
    let swapped = |gpu: &[bench::FrameTime], frame: &[bench::FrameTime]| -> Vec<bench::FrameTime> {
        gpu.iter()
            .zip(frame)
            .map(|(g, f)| bench::FrameTime { gpu_ms: g.gpu_ms, ..*f })
            .collect()
    };
    let cpu = bench::is_cpu_adapter(&device);
    if cpu {
        let mut check = bench::Check::default();
        check.frames("8 characters' passes for 4,000's frame", &swapped(&small, &large), true);
        assert!(!check.passed(), "{small:?} {large:?}");
        assert!(
            check.cell().contains("not written when the passes ran"),
            "{}",
            check.cell()
        );
    }
    let median = |f: &[bench::FrameTime], g: fn(&bench::FrameTime) -> f64| bench::median(f.iter().map(g).collect());
    let (large_gpu, small_wait) = (median(&large, |f| f.gpu_ms), median(&small, |f| f.wait_ms));
    if large_gpu > 2.0 * (small_wait * bench::WAIT_SLACK + bench::SLACK_MS) {
        let mut check = bench::Check::default();
        check.frames("4,000 characters' passes for 8's frame", &swapped(&large, &small), cpu);
        assert!(
            check.cell().contains("they were not taken around this frame's passes"),
            "{}",
            check.cell()
        );
    }
    // Zero and negative times fail whatever the device.
    let mut check = bench::Check::default();
    let empty = bench::FrameTime {
        gpu_ms: 0.0,
        wait_ms: 0.0,
        cpu_ms: None,
    };
    check.frames("an empty frame", &[empty], cpu);
    check.non_negative("µs per character", -0.003);
    assert_eq!(check.failures.len(), 2, "{:?}", check.failures);
}

#[test]
fn utc_dates() {
    use std::time::{Duration, UNIX_EPOCH};
    assert_eq!(bench::utc_date(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    assert_eq!(
        bench::utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661)),
        "2000-02-29T01:01:01Z"
    );
    assert_eq!(
        bench::utc_date(UNIX_EPOCH + Duration::from_secs(1_798_761_599)),
        "2026-12-31T23:59:59Z"
    );
}

#[test]
fn plot_draws_every_series() {
    let row = |workload: &str, path: PathKind, n: u32, ms: f64| Row {
        workload: workload.into(),
        clip_format: "compressed".into(),
        path,
        characters: n,
        joints: n * 50,
        pass_ms: None,
        gpu_ms: None,
        frame_ms: ms,
        cpu_encode_ms: None,
        dispatches: None,
        pages: None,
        upload_bytes: None,
        edit_upload_bytes: None,
        edit_encode_ms: None,
        readback_gpu_ms: None,
        readback_frame_ms: None,
        threads: 1,
        character_threads: "one".into(),
        check: bench::Check::default(),
        bytes_per_joint_per_character: 300.0,
        bytes_per_joint_shared: 200.0,
        characters_per_ms: f64::from(n) / ms,
        device: "test".into(),
        date: "2000-01-01T00:00:00Z".into(),
    };
    let rows = vec![
        row("single-clip", PathKind::GpuStaged, 1000, 2.0),
        row("single-clip", PathKind::GpuStaged, 16000, 30.0),
        row("locomotion-2d", PathKind::Cpu1, 1000, 5.0),
        row("locomotion-2d", PathKind::Cpu1, 16000, 80.0),
    ];
    let (w, h) = (600, 400);
    let px = bench::plot::draw(&rows, "TEST", w, h).expect("the chart is drawn");
    assert_eq!(px.len(), (w * h * 4) as usize);
    let coloured = px
        .chunks_exact(4)
        .filter(|p| (i32::from(p[0]) - i32::from(p[2])).abs() > 60)
        .count();
    assert!(coloured > 500, "series drawn: {coloured} coloured pixels");
}

#[test]
fn a_chart_of_curves_draws_each_curve_and_refuses_bad_points() {
    use bench::plot::{Curve, draw_curves};
    let curve = |colour: [u8; 3], dashed: bool, k: f64| Curve {
        name: format!("k = {k}"),
        colour,
        dashed,
        points: (0..50)
            .map(|i| (f64::from(i) * 0.02, (f64::from(i) * 0.1 * k).sin()))
            .collect(),
    };
    let curves = [curve([220, 40, 40], false, 1.0), curve([40, 40, 220], true, 2.0)];
    let (w, h) = (700, 400);
    let px = draw_curves("TEST", "x", "y", &curves, w, h).expect("the chart is drawn");
    assert_eq!(px.len(), (w * h * 4) as usize);
    // Pixels of each curve's colour, red and blue.
    let count = |f: &dyn Fn(&[u8]) -> bool| px.chunks_exact(4).filter(|p| f(p)).count();
    let red = count(&|p| p[0] > 180 && p[2] < 100);
    let blue = count(&|p| p[2] > 180 && p[0] < 100);
    assert!(red > 300 && blue > 150, "{red} red and {blue} blue pixels");
    // A point that is not finite, no point at all, a size too small: errors.
    let mut bad = curves.clone();
    bad[1].points[3].1 = f64::NAN;
    assert!(draw_curves("TEST", "x", "y", &bad, w, h).is_err());
    assert!(draw_curves("TEST", "x", "y", &[], w, h).is_err());
    assert!(draw_curves("TEST", "x", "y", &curves, 300, 100).is_err());
}
