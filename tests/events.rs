//! Clip events fired by the GPU: the clock stage's records equal the CPU mirror's for random
//! crowds (blend trees, cross-fades, layers, reverse rates, every loop mode, frames spanning
//! several loops), on the staged and the fused path; every crossing fires exactly once against the
//! f64 reference; a shader that double-fires at a loop wrap is caught; a full log counts its
//! overflow and writes nothing past its end.

mod common;

use rand::Rng;
use std::collections::HashMap;
use wgpu_anim::cpu::{EventLog, PageBuffers};
use wgpu_anim::gpu::{LoopMode, Transition};
use wgpu_anim::layout::{FRAME_EVENTS, GpuEventRecord, GpuFrame};
use wgpu_anim::{Animator, AnimatorDesc, ClipEvent, InstanceDesc};

/// The records of one frame in a canonical order (the GPU appends them in any order).
fn sorted(mut records: Vec<GpuEventRecord>) -> Vec<GpuEventRecord> {
    records.sort_by_key(|r| {
        (
            r.character,
            r.state,
            r.clip,
            r.event,
            r.frame,
            r.crossings,
            r.weight.to_bits(),
        )
    });
    records
}

/// One frame of `dt` on the GPU, and the same frame through the CPU mirror from the clocks the
/// GPU started it with: `(gpu, mirror)` records, sorted.
fn frame_against_mirror(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut Animator,
    dt: f32,
) -> (Vec<GpuEventRecord>, Vec<GpuEventRecord>) {
    a.prepare(queue, dt);
    let (mut clocks, _) = a.read_back(device, queue).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    let (gpu, overflow) = a.read_events(device, queue).unwrap();
    assert_eq!(overflow, 0, "the log is large enough for the test");
    let frame = GpuFrame {
        dt,
        instance_count: a.controller().instance_count() as u32,
        snapshot_offset: a.max_joints(),
        first_instance: 0,
        frame: a.frame() as u32,
        flags: FRAME_EVENTS,
        output_base: (wgpu_anim::layout::outputs_offset(a.controller().page_capacity(0)) / 16) as u32,
        morph_api_base: 0,
        look_at: glam::Vec4::ZERO,
        cull_planes: [glam::Vec4::W; 6],
        lod: glam::Vec4::ZERO,
        view_w: glam::Vec4::W,
        key_base: 0,
        vat_size: 0.0,
        _pad_b: 0,
        _pad_c: 0,
        sections: wgpu_anim::shaders::Resource::section_bases(
            a.controller().page_capacity(0),
            a.controller().page_max_joints(0),
            a.controller().page_options(),
        ),
    };
    let mut log = EventLog::new(a.event_capacity() as usize);
    let mut lists = vec![Default::default(); clocks.len()];
    let mut roots = vec![bytemuck::Zeroable::zeroed(); clocks.len()];
    let mut instances = a.controller().instances().to_vec();
    let mut page = PageBuffers::new(&frame, &mut instances)
        .layer_defs(a.controller().layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists)
        .outputs(&mut roots)
        .events(&mut log);
    wgpu_anim::cpu::clock(a.controller().library(), &mut page).unwrap();
    (sorted(gpu), sorted(log.records))
}

/// Whether instance `i` plays a blend tree in any state (its phase then advances by an f32
/// division whose rounding may differ between GPU and CPU).
fn plays_tree(a: &Animator, i: usize) -> bool {
    let inst = a.controller().instances()[i];
    inst.tree_nodes > 0
        || inst.source_kind() == wgpu_anim::layout::source_kind::TREE
        || (0..3).any(|k| {
            inst.flags & (wgpu_anim::layout::LAYER_ON << k) != 0
                && a.controller().layer_defs()[inst.layers[k].def as usize].tree_nodes > 0
        })
}

/// Random crowds on both paths: each frame's records equal the mirror's, record for record.
/// Clips match exactly (clocks are integers). A blend tree's phase advance divides by an f32 sum
/// that may round differently on the two sides (`common::assert_clock`); a record of a character
/// playing a tree may then be on one side only, when its event lies within that rounding of the
/// frame's end: at most 1 in 1,000 of the records, and none of a character playing clips only.
#[test]
fn gpu_events_equal_the_mirror_for_random_crowds() {
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_full(41, &[1, 37], &[], true, 0);
    assert!(!lib.events().is_empty());
    let mut r = common::rng(7);
    let mut total = 0usize;
    let mut tree_only_one_side = 0usize;
    for fused in [false, true] {
        let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(300)).unwrap();
        a.set_fused(fused).unwrap();
        a.watch_events(&device, 1 << 16).unwrap();
        for _ in 0..300 {
            let skeleton = r.gen_range(0..2);
            let mut desc = common::random_state(&mut r, &lib, skeleton);
            desc.rate = [1.0, -1.0, 0.5, -2.3, 3.1, 0.0][r.gen_range(0..6)];
            desc.time = r.gen_range(0.0..2.0);
            desc.loop_mode = [LoopMode::Forever, LoopMode::Once, LoopMode::Repeat(2)][r.gen_range(0..3)];
            a.controller_mut().add_instance(&desc).unwrap();
        }
        common::random_layers(&mut a, &mut r);
        for f in 0..30 {
            // Now and then a cross-fade, a new state, a frame longer than several loops.
            for _ in 0..20 {
                let i = r.gen_range(0..a.controller().instance_count());
                let skeleton = a.controller().instances()[i].skeleton;
                let mut desc = common::random_state(&mut r, &lib, skeleton);
                desc.rate = r.gen_range(-2.0..2.0);
                let frozen = Transition::linear(0.5)
                    .with_curve(wgpu_anim::gpu::Curve::Smooth)
                    .with_frozen(true);
                let t = [None, Some(Transition::linear(0.2)), Some(frozen)][r.gen_range(0..3)];
                a.controller_mut().play(i, &desc, t).unwrap();
            }
            let dt = if f % 9 == 8 { 7.3 } else { r.gen_range(0.0..0.08) };
            let (gpu, cpu) = frame_against_mirror(&device, &queue, &mut a, dt);
            total += gpu.len();
            let mut left: HashMap<(u32, u32, u32, u32, u32), i32> = HashMap::new();
            for rec in &gpu {
                *left
                    .entry((rec.character, rec.state, rec.clip, rec.event, rec.crossings))
                    .or_default() += 1;
            }
            for rec in &cpu {
                *left
                    .entry((rec.character, rec.state, rec.clip, rec.event, rec.crossings))
                    .or_default() -= 1;
            }
            for (&(character, ..), &n) in left.iter().filter(|(_, n)| **n != 0) {
                assert!(
                    plays_tree(&a, character as usize),
                    "frame {f} (fused {fused}): character {character} plays clips only and differs by {n}"
                );
                tree_only_one_side += n.unsigned_abs() as usize;
            }
            // Records on both sides carry the same weight and frame.
            for rec in &gpu {
                if let Some(w) = cpu.iter().find(|c| {
                    (c.character, c.state, c.clip, c.event, c.crossings)
                        == (rec.character, rec.state, rec.clip, rec.event, rec.crossings)
                }) {
                    assert!((w.weight - rec.weight).abs() <= 1e-5, "{rec:?} vs {w:?}");
                    assert_eq!(w.frame, rec.frame);
                }
            }
        }
    }
    println!("{total} records; {tree_only_one_side} of tree players on one side only");
    assert!(total > 2_000, "the crowd fires events: {total}");
    assert!(tree_only_one_side * 1000 <= total, "{tree_only_one_side} of {total}");
}

/// A library of one skeleton and `clips` clips of the given durations, each with an event at each
/// of the given fractions of its duration.
fn clip_library(durations: &[f32], fractions: &[f32]) -> wgpu_anim::AnimationLibrary {
    let mut r = common::rng(3);
    let skeleton = common::random_skeleton(&mut r, "s", 3);
    let mut b = wgpu_anim::LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    for (k, &d) in durations.iter().enumerate() {
        let mut clip = common::random_clip(&mut r, &skeleton, &format!("c{k}"));
        clip.duration = d;
        clip.events = fractions
            .iter()
            .enumerate()
            .map(|(e, &x)| ClipEvent::new(&format!("e{e}"), x * d))
            .collect();
        b.add_clip(s, &clip).unwrap();
    }
    b.build()
}

/// Every crossing fires exactly once: characters playing single clips forward and backward at
/// rates from 0.3 to 4, looping forever, once or three times, with frames from 1 ms to several
/// loops long; per frame, per character and event, the GPU's crossings equal the f64
/// reference's (`reference::event_crossings`). Events at the clip's ends are included.
/// Characters whose time line passes within 1 µs of an event point at a frame's end (where the
/// clock's tick rounding could decide) are left out; there are none in practice.
#[test]
fn every_crossing_fires_exactly_once_against_the_f64_reference() {
    let (device, queue) = common::device();
    let durations = [0.7, 1.0, 1.9, 0.25];
    let fractions = [0.0, 0.31, 0.5, 0.77, 1.0];
    let lib = clip_library(&durations, &fractions);
    let mut r = common::rng(11);
    const N: usize = 256;
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(N as u32)).unwrap();
    a.watch_events(&device, 1 << 14).unwrap();
    let mut plays = Vec::new();
    for _ in 0..N {
        let clip = r.gen_range(0..durations.len());
        let rate = r.gen_range(0.3..4.0) * if r.gen_bool(0.5) { -1.0 } else { 1.0 };
        let loops = [None, Some(1), Some(3)][r.gen_range(0..3)];
        let start = r.gen_range(0.0..durations[clip]);
        a.controller_mut()
            .add_instance(
                &InstanceDesc::new(lib.clip_at(clip as u32).unwrap())
                    .with_rate(rate)
                    .with_time(start)
                    .with_loop_mode(match loops {
                        None => LoopMode::Forever,
                        Some(1) => LoopMode::Once,
                        Some(n) => LoopMode::Repeat(n),
                    }),
            )
            .unwrap();
        plays.push((clip, rate, loops, start));
    }
    let dts: Vec<f32> = (0..60)
        .map(|f| match f % 10 {
            9 => 3.3,
            4 => 0.001,
            _ => r.gen_range(0.005..0.05),
        })
        .collect();
    // got[character][event][frame]
    let mut got = vec![vec![vec![0u64; dts.len()]; fractions.len()]; N];
    for (f, &dt) in dts.iter().enumerate() {
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let (records, overflow) = a.read_events(&device, &queue).unwrap();
        assert_eq!(overflow, 0);
        for rec in records {
            assert_eq!(rec.frame as u64, a.frame());
            assert_eq!(rec.state, 0);
            got[rec.character as usize][rec.event as usize][f] += u64::from(rec.crossings);
        }
    }
    let dts64: Vec<f64> = dts.iter().map(|&d| f64::from(d)).collect();
    let (mut checked, mut fired, mut ambiguous) = (0, 0u64, 0);
    for (i, &(clip, rate, loops, start)) in plays.iter().enumerate() {
        let duration = f64::from(durations[clip]);
        // The time line's positions at frame ends, to find ambiguous ones.
        let mut x = f64::from(start);
        let mut ends = vec![x];
        for &dt in &dts64 {
            x += f64::from(rate) * dt;
            ends.push(x);
        }
        for (e, &fraction) in fractions.iter().enumerate() {
            let time = f64::from(fraction * durations[clip]);
            let near = ends.iter().any(|&x| {
                let off = (x - time).rem_euclid(duration);
                off.min(duration - off) < 1e-6
            });
            if near {
                ambiguous += 1;
                continue;
            }
            let want =
                wgpu_anim::reference::event_crossings(f64::from(start), f64::from(rate), &dts64, duration, loops, time);
            assert_eq!(
                got[i][e], want,
                "character {i} (clip {clip}, rate {rate}, loops {loops:?}, start {start}) event at {time}"
            );
            checked += 1;
            fired += want.iter().sum::<u64>();
        }
    }
    println!("{checked} character-events checked, {fired} crossings, {ambiguous} left out");
    assert!(checked >= N * fractions.len() * 99 / 100, "{ambiguous} ambiguous");
    assert!(fired > 10_000, "{fired}");
}

/// Runs frames of exactly 0.25 s on a 1 s loop with an event at 0 (its point reached exactly at
/// every wrap) through the clock stage whose WGSL is `source`, against the animator's own
/// buffers; returns the event's crossings per frame.
fn wrap_frames(device: &wgpu::Device, queue: &wgpu::Queue, source: &str) -> Vec<u32> {
    use wgpu_anim::shaders::{Resource, Stage};
    let lib = clip_library(&[1.0], &[0.0]);
    let mut a = Animator::new(device, &lib, &AnimatorDesc::default().with_max_instances(1)).unwrap();
    a.watch_events(device, 64).unwrap();
    a.controller_mut()
        .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()))
        .unwrap();
    let entries = Stage::Clock.layout_entries();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &entries,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        })),
        module: &module,
        entry_point: Some("clock"),
        compilation_options: Default::default(),
        cache: None,
    });
    let frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: size_of::<GpuFrame>() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let lib_gpu = a.gpu_library().clone();
    let buffer = |resource: Resource| match resource {
        Resource::Frame => &frame_buffer,
        Resource::Library => lib_gpu.layout_buffer(),
        Resource::LayerDefs => a.layer_def_buffer(),
        Resource::Heap => lib_gpu.heap(),
        Resource::Instances => a.instance_buffer(),
        Resource::CharacterState => a.clock_buffer(),
        Resource::Events => a.event_log_buffer(),
        other => panic!("the clock stage does not bind {other:?}"),
    };
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &Stage::Clock
            .bindings()
            .iter()
            .map(|&(resource, _)| wgpu::BindGroupEntry {
                binding: resource.binding(),
                resource: buffer(resource).as_entire_binding(),
            })
            .collect::<Vec<_>>(),
    });
    let mut out = Vec::new();
    for f in 1..=12u32 {
        // The animator uploads the instance and its clock; this pipeline runs its frame.
        a.prepare(queue, 0.25);
        let frame = GpuFrame {
            dt: 0.25,
            instance_count: 1,
            snapshot_offset: a.max_joints(),
            first_instance: 0,
            frame: f,
            flags: FRAME_EVENTS,
            output_base: (wgpu_anim::layout::outputs_offset(a.controller().page_capacity(0)) / 16) as u32,
            morph_api_base: 0,
            look_at: glam::Vec4::ZERO,
            cull_planes: [glam::Vec4::W; 6],
            lod: glam::Vec4::ZERO,
            view_w: glam::Vec4::W,
            key_base: 0,
            vat_size: 0.0,
            _pad_b: 0,
            _pad_c: 0,
            sections: wgpu_anim::shaders::Resource::section_bases(
                a.controller().page_capacity(0),
                a.controller().page_max_joints(0),
                a.controller().page_options(),
            ),
        };
        queue.write_buffer(&frame_buffer, 0, bytemuck::bytes_of(&frame));
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.clear_buffer(a.event_log_buffer(), 0, Some(16));
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        queue.submit([encoder.finish()]);
        let (records, _) = a.read_events(device, queue).unwrap();
        out.push(records.iter().map(|r| r.crossings).sum());
    }
    out
}

/// The event at 0 of a 1 s loop played in frames of exactly 0.25 s is reached exactly at each
/// wrap: it fires once per loop, on the frame that lands on it (frames 4, 8, 12), and at the
/// start (frame 1). A clock stage that counts a frame's start point as crossed on every frame,
/// not only on the first — the usual double-fire at a loop wrap, `[from, to]` instead of
/// `(from, to]` — fires again on the frame after each wrap; the same check catches it.
#[test]
fn a_double_fire_at_a_loop_wrap_is_caught() {
    let (device, queue) = common::device();
    let source = wgpu_anim::shaders::stage_source(wgpu_anim::shaders::Stage::Clock).unwrap();
    let want: Vec<u32> = (1..=12).map(|f| u32::from(f == 1 || f % 4 == 0)).collect();
    let reference = wgpu_anim::reference::event_crossings(0.0, 1.0, &[0.25; 12], 1.0, None, 0.0);
    assert_eq!(reference.iter().map(|&n| n as u32).collect::<Vec<_>>(), want);
    assert_eq!(
        wrap_frames(&device, &queue, &source),
        want,
        "the clock stage fires once per wrap"
    );
    let marker = "if started {";
    assert_eq!(source.matches(marker).count(), 2, "the mutation finds its place");
    let double = source.replace(marker, "if true {");
    let got = wrap_frames(&device, &queue, &double);
    assert_ne!(got, want, "the double-firing stage is caught");
    assert!(
        (1..12).any(|f| got[f] == 1 && got[f - 1] == 1),
        "it fires on consecutive frames: {got:?}"
    );
}

/// A log of 8 records in a frame that fires more: 8 kept, the rest counted as overflow, nothing
/// written past the log, and the next frame's log starts empty. A log larger than a storage
/// binding may be is refused with an error, not a device panic.
#[test]
fn a_full_log_counts_its_overflow_and_writes_nothing_past_its_end() {
    let (device, queue) = common::device();
    let lib = clip_library(&[1.0], &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(4)).unwrap();
    let e = a.watch_events(&device, u32::MAX).unwrap_err().to_string();
    assert!(
        e.contains("event log") && e.contains("allows"),
        "a log past the binding limit: {e}"
    );
    a.watch_events(&device, 8).unwrap();
    assert_eq!(
        a.event_log_buffer().size(),
        16 + 8 * 32,
        "exactly the log, so a write past it would fault"
    );
    for _ in 0..4 {
        a.controller_mut()
            .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()))
            .unwrap();
    }
    let run = |a: &mut Animator, dt: f32| {
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        a.read_events(&device, &queue).unwrap()
    };
    // 4 characters cross 9 events each: 36 records for 8 places.
    let (records, overflow) = run(&mut a, 0.95);
    assert_eq!((records.len(), overflow), (8, 28));
    assert!(records.iter().all(|r| r.character < 4 && r.crossings == 1));
    // Robust access aside, the shader guards the index: the log's count says 36 were appended.
    let head: Vec<u32> = wgpu_anim::gpu::read_buffer(&device, &queue, a.event_log_buffer(), 0, 2).unwrap();
    assert_eq!(head, [36, 28]);
    let (records, overflow) = run(&mut a, 0.0);
    assert_eq!(
        (records.len(), overflow),
        (0, 0),
        "a paused frame fires nothing; the log was cleared"
    );
}
