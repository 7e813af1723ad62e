//! State machines on the GPU against the CPU mirror over long random scripts: every kind of
//! condition, exit time, interruption source, `Any` transition, trigger, reversed and
//! non-looping state, cross-fade and inertialization, state by state and event by event; on the
//! staged and the fused path, across pages, with update-rate LOD; the clock stage's blend lists
//! and clocks against its mirror frame by frame; and the comparisons shown to fail on a wrong
//! buffer.

mod common;

use rand::Rng;
use rand::rngs::SmallRng;
use std::collections::BTreeMap;
use wgpu_anim::blend::{BlendNode, BlendTree};
use wgpu_anim::cpu::{self, EventLog, PageBuffers};
use wgpu_anim::gpu::{Animator, AnimatorDesc, InstanceDesc};
use wgpu_anim::layout::BlendList;
use wgpu_anim::layout::{GpuMachineState, MACHINE_EVENT_CLIP};
use wgpu_anim::machine::simulate::{FrameReport, Script, ScriptEvent, simulate_cpu};
use wgpu_anim::machine::{
    Blending, Condition, Curve, Interruption, MachineId, Motion, Parameter, State, StateMachine, Transition, Value,
};
use wgpu_anim::shaders::Resource;
use wgpu_anim::testing::{GpuSimulation, simulate_gpu};
use wgpu_anim::{AnimationLibrary, Clip, LibraryBuilder};

/// A machine with every kind of condition, exit time (below 1, above 1, at a non-looping end),
/// interruption source, `Any` transitions (one `to_self`), triggers, a blend tree state with a
/// speed parameter, reversed and non-looping states, fixed and normalized durations, offsets,
/// linear and smooth cross-fades and inertialization.
fn machine() -> StateMachine {
    machine_with(Motion::tree("stride", &["vx"]))
}

/// [`machine`] with `loco` for the state `loco` plays.
fn machine_with(loco: Motion) -> StateMachine {
    let crossfade = |curve| Blending::CrossFade { curve };
    StateMachine {
        name: "everything".into(),
        parameters: vec![
            Parameter::float("vx", 0.0),
            Parameter::float("vz", 0.0),
            Parameter::float("speed", 1.0),
            Parameter::int("mode", 0),
            Parameter::bool("flag", false),
            Parameter::trigger("go"),
            Parameter::trigger("jump"),
        ],
        states: vec![
            State::new("idle", Motion::clip("idle")),
            State::new("loco", loco).speed_parameter("speed"),
            State::new("a", Motion::clip("one")),
            State::new("b", Motion::clip("half")).looping(false),
            State::new("rev", Motion::clip("two")).speed(-1.0),
            State::new("stop", Motion::clip("one")).speed(-0.5).looping(false),
        ],
        entry: "idle".into(),
        transitions: vec![
            Transition::any("b")
                .when(Condition::trigger("jump"))
                .duration(0.125)
                .interruption(Interruption::Source),
            Transition::any("a")
                .when(Condition::equals("mode", 3))
                .exit_time(0.5)
                .normalized_duration(0.25)
                .to_self(true),
            Transition::new("idle", "loco")
                .when(Condition::greater("vz", 0.5))
                .duration(0.25)
                .blending(crossfade(Curve::Smooth))
                .interruption(Interruption::Destination),
            Transition::new("loco", "idle")
                .when(Condition::less("vz", 0.5))
                .when(Condition::is_false("flag"))
                .duration(0.25)
                .blending(Blending::Inertialize),
            Transition::new("loco", "rev")
                .when(Condition::greater("mode", 1.0))
                .when(Condition::less("mode", 5.0))
                .exit_time(0.25)
                .duration(0.0625)
                .interruption(Interruption::Source),
            Transition::new("rev", "stop")
                .when(Condition::trigger("go"))
                .exit_time(0.75)
                .duration(0.125),
            Transition::new("stop", "idle").exit_time(1.0).duration(0.0),
            Transition::new("b", "idle").exit_time(1.0).duration(0.0625),
            Transition::new("a", "idle")
                .when(Condition::is_true("flag"))
                .when(Condition::not_equals("mode", 3))
                .duration(0.125)
                .offset(0.5),
            Transition::new("rev", "a")
                .when(Condition::is_false("flag"))
                .when(Condition::equals("mode", 2))
                .duration(0.25)
                .interruption(Interruption::Destination),
            Transition::new("idle", "a")
                .when(Condition::trigger("go"))
                .exit_time(1.5)
                .duration(0.125),
            Transition::new("a", "loco")
                .when(Condition::greater("vx", 0.25))
                .when(Condition::less("vx", 1.0))
                .duration(0.125)
                .offset(0.25),
        ],
    }
}

/// The mannequin's clips, rest clips of 0.5, 1 and 2 s, a 1D blend space between the last two
/// (so that its length, 1 + `vx` seconds for `vx` in [0, 1], is exact), and [`machine`].
fn library() -> (AnimationLibrary, MachineId) {
    library_with(&machine())
}

/// [`library`] with `machine` instead of [`machine`].
fn library_with(machine: &StateMachine) -> (AnimationLibrary, MachineId) {
    let skeleton = wgpu_anim::mannequin::skeleton();
    let clips = wgpu_anim::mannequin::clips(&skeleton);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton);
    let mut ids: Vec<_> = clips.iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    for (name, seconds) in [("half", 0.5), ("one", 1.0), ("two", 2.0)] {
        ids.push(b.add_clip(s, &Clip::rest_pose(name, seconds)).unwrap());
    }
    let (one, two) = (ids[ids.len() - 2], ids[ids.len() - 1]);
    b.add_blend_tree(&BlendTree {
        name: "stride".into(),
        nodes: vec![
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(0.0, 1), (1.0, 2)],
            },
            BlendNode::Clip(one),
            BlendNode::Clip(two),
        ],
        root: 0,
    })
    .unwrap();
    let id = b.add_state_machine(s, machine).unwrap();
    (b.build(), id)
}

/// A random parameter change for one character: dyadic values, so that exact hits stay exact.
fn random_set(r: &mut SmallRng) -> BTreeMap<String, Value> {
    let mut set = BTreeMap::new();
    for _ in 0..r.gen_range(1..3) {
        let (name, value) = match r.gen_range(0..8) {
            0 => (
                "vx",
                Value::Float([-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0][r.gen_range(0..7)]),
            ),
            1 => ("vz", Value::Float([-0.5, 0.0, 0.5, 0.75, 1.5][r.gen_range(0..5)])),
            2 => ("speed", Value::Float([0.5, 1.0, 2.0, 0.0][r.gen_range(0..4)])),
            3 => ("mode", Value::Int(r.gen_range(0..6))),
            4 => ("flag", Value::Bool(r.gen_bool(0.5))),
            5 => ("go", Value::Bool(r.gen_bool(0.8))),
            _ => ("jump", Value::Bool(r.gen_bool(0.9))),
        };
        set.insert(name.to_owned(), value);
    }
    set
}

/// `frames` frames of 1/32 s for `characters` characters, a tenth of them changing parameters
/// each frame (a reset now and then).
fn random_script(seed: u64, characters: u32, frames: u32) -> Script {
    let mut r = common::rng(seed);
    let mut events = Vec::new();
    for frame in 0..frames {
        for character in 0..characters {
            if r.gen_bool(0.1) {
                events.push(ScriptEvent {
                    frame,
                    character,
                    reset: r.gen_bool(0.01),
                    set: random_set(&mut r),
                });
            }
        }
    }
    Script {
        dt: 1.0 / 32.0,
        frames,
        characters,
        events,
    }
}

/// Where two runs first differ: a state, transition (index, source, destination) or event list
/// not equal, or a time or weight more than 1e-6 apart.
fn first_difference(a: &[FrameReport], b: &[FrameReport]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} frames against {}", a.len(), b.len()));
    }
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-6;
    for (fa, fb) in a.iter().zip(b) {
        for (x, y) in fa.characters.iter().zip(&fb.characters) {
            let same_transition = match (&x.transition, &y.transition) {
                (None, None) => true,
                (Some(s), Some(t)) => {
                    (s.index, &s.source, &s.destination) == (t.index, &t.source, &t.destination)
                        && close(f64::from(s.weight), f64::from(t.weight))
                        && close(s.destination_time, t.destination_time)
                }
                _ => false,
            };
            if x.state != y.state || x.events != y.events || !close(x.time, y.time) || !same_transition {
                return Some(format!(
                    "frame {}, character {}: {x:?} against {y:?}",
                    fa.frame, x.character
                ));
            }
        }
    }
    None
}

/// Runs `script` on the GPU as `how` says and on the CPU mirror: they must agree, and the run
/// must have exercised the machine (transitions fired, every state entered).
fn agree(lib: &AnimationLibrary, id: MachineId, script: &Script, how: &GpuSimulation, what: &str) -> Vec<FrameReport> {
    let cpu = simulate_cpu(lib, id, script).unwrap();
    let gpu = simulate_gpu(lib, id, script, how).unwrap();
    if let Some(d) = first_difference(&cpu, &gpu) {
        panic!("{what}: the GPU and the CPU mirror differ at {d}");
    }
    let mut entered = std::collections::BTreeSet::new();
    let mut started = 0;
    for f in &cpu {
        for c in &f.characters {
            entered.insert(c.state.clone());
            started += c.events.iter().filter(|e| e.kind == "transition_started").count();
        }
    }
    assert_eq!(entered.len(), 6, "{what}: every state played ({entered:?})");
    assert!(started > 100, "{what}: {started} transitions fired");
    gpu
}

#[test]
fn long_random_scripts_decide_alike_on_the_gpu_and_the_mirror() {
    let (lib, id) = library();
    let script = random_script(1, 48, 2000);
    let gpu = agree(&lib, id, &script, &GpuSimulation::default(), "staged");
    // The comparison fails on a wrong buffer: one state, one event, one time off.
    let cpu = simulate_cpu(&lib, id, &script).unwrap();
    let mut wrong = gpu.clone();
    wrong[1234].characters[7].state = "b".into();
    if cpu[1234].characters[7].state == "b" {
        wrong[1234].characters[7].state = "a".into();
    }
    assert!(first_difference(&cpu, &wrong).is_some(), "a wrong state is caught");
    let mut wrong = gpu.clone();
    wrong[600].characters[3].time += 2e-6;
    assert!(first_difference(&cpu, &wrong).is_some(), "a wrong time is caught");
    let mut wrong = gpu;
    let f = (0..wrong.len())
        .find(|&f| !wrong[f].characters[0].events.is_empty())
        .expect("character 0 has events");
    wrong[f].characters[0].events.pop();
    assert!(first_difference(&cpu, &wrong).is_some(), "a missing event is caught");
}

/// A library whose machines play clips only runs the clock's variant without the blend-tree
/// evaluator in the rules (`MACHINE_TREES` off): it decides as the mirror too.
#[test]
fn a_machine_of_clips_only_decides_alike() {
    let (lib, id) = library_with(&machine_with(Motion::clip("two")));
    let defs = wgpu_anim::shaders::library_defs(&lib);
    assert!(defs.iter().any(|d| d.0 == "MACHINES") && !defs.iter().any(|d| d.0 == "MACHINE_TREES"));
    let (with_tree, _) = library();
    assert!(
        wgpu_anim::shaders::library_defs(&with_tree)
            .iter()
            .any(|d| d.0 == "MACHINE_TREES")
    );
    agree(
        &lib,
        id,
        &random_script(4, 40, 800),
        &GpuSimulation::default(),
        "clips only",
    );
}

#[test]
fn the_fused_path_and_pages_decide_alike() {
    let (lib, id) = library();
    let script = random_script(2, 40, 600);
    let desc = AnimatorDesc::default().with_page_instances(Some(16));
    let how = GpuSimulation::default().with_desc(desc).with_fused(true);
    agree(&lib, id, &script, &how, "fused, pages of 16");
}

#[test]
fn characters_evaluated_every_fourth_frame_decide_as_every_frame() {
    let (lib, id) = library();
    let script = random_script(3, 32, 600);
    let how = GpuSimulation::default().with_update_rate(4);
    let every_fourth = agree(&lib, id, &script, &how, "update rate 4");
    let every = simulate_gpu(&lib, id, &script, &GpuSimulation::default()).unwrap();
    assert_eq!(first_difference(&every, &every_fourth), None);
}

/// Whether two blend lists hold the same samples (clips, layers, the inertia bits exactly; times
/// and weights within 1e-5, relative: a cross-fade's weight is a quotient, which a GPU may round
/// differently).
fn lists_close(a: &BlendList, b: &BlendList) -> bool {
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-5 * (1.0 + y.abs());
    let samples = a.count as usize;
    a.count == b.count
        && a.inertia == b.inertia
        && a.mesh_additive == b.mesh_additive
        && close(a.inertia_time, b.inertia_time)
        && a.samples[..samples]
            .iter()
            .zip(&b.samples[..samples])
            .all(|(s, t)| s.clip == t.clip && s.layer == t.layer && close(s.time, t.time) && close(s.weight, t.weight))
}

/// The clock stage on the GPU against its mirror with the machines' sections, frame by frame:
/// the blend lists (what each machine plays: targets, sources, weights, the kept pose), the
/// clocks, the machines and parameter slots, and the events.
#[test]
fn the_clock_stage_plays_what_its_mirror_plays() {
    let (lib, id) = library();
    let (device, queue) = common::device();
    let n = 32;
    let desc = AnimatorDesc::default().with_max_instances(n).with_inertialization(true);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    a.watch_events(&device, 16 * n).unwrap();
    let clip = lib.clip_at(0).unwrap();
    for c in 0..n as usize {
        a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
        a.controller_mut().set_machine(c, Some(id)).unwrap();
    }
    let script = random_script(4, n, 400);
    let mut caught = false;
    let (mut kept, mut snapshots, mut inertial) = (0, 0, 0);
    for f in 0..script.frames {
        for e in script.events.iter().filter(|e| e.frame == f) {
            for (name, &value) in &e.set {
                a.controller_mut()
                    .set_parameter(e.character as usize, name, value)
                    .unwrap();
            }
        }
        a.prepare(&queue, script.dt);
        // What the clock pass starts from: the buffers once the frame's uploads are in.
        let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
        let (mut states, mut slots) = a.read_machines_page(&device, &queue, 0).unwrap();
        // The instances as the GPU holds them: the clock writes a machine's transition length.
        let mut instances: Vec<wgpu_anim::layout::GpuInstance> = a
            .read_page_buffer(&device, &queue, 0, Resource::Instances, 0, u64::from(n))
            .unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let (gpu_clocks, _) = a.read_back(&device, &queue).unwrap();
        let gpu_lists = a.read_blend_lists(&device, &queue).unwrap();
        let (gpu_states, gpu_slots) = a.read_machines_page(&device, &queue, 0).unwrap();
        let (gpu_events, _) = a.read_events(&device, &queue).unwrap();
        let frame = a.frame_uniform(0).unwrap();
        let gpu_instances: Vec<wgpu_anim::layout::GpuInstance> = a
            .read_page_buffer(&device, &queue, 0, Resource::Instances, 0, u64::from(n))
            .unwrap();
        let mut lists = vec![Default::default(); n as usize];
        let mut log = EventLog::new(a.event_capacity() as usize);
        let mut page = PageBuffers::new(&frame, &mut instances)
            .layer_defs(a.controller().layer_defs())
            .clocks(&mut clocks)
            .blend_lists(&mut lists)
            .events(&mut log)
            .section(Resource::MachineStates, &mut states)
            .section(Resource::MachineParameters, &mut slots);
        cpu::clock(&lib, &mut page).unwrap();
        drop(page);
        assert_eq!(gpu_instances, instances, "frame {f}: instances");
        assert_eq!(gpu_states, states, "frame {f}: machines");
        assert_eq!(gpu_slots, slots, "frame {f}: parameter slots");
        assert_eq!(gpu_clocks, clocks, "frame {f}: clocks");
        for (i, (g, m)) in gpu_lists.iter().zip(&lists).enumerate() {
            assert!(
                lists_close(g, m),
                "frame {f}, character {i}: blend list {g:?} against {m:?}"
            );
            kept += usize::from(g.inertia & wgpu_anim::layout::inertia::KEEP_POSE != 0);
            snapshots += usize::from(g.samples[..g.count as usize].iter().any(|s| s.clip == u32::MAX));
            inertial += usize::from(g.inertia & wgpu_anim::layout::inertia::OFFSET != 0);
        }
        let machine_events = |records: &[wgpu_anim::layout::GpuEventRecord]| {
            let mut v: Vec<_> = records
                .iter()
                .filter(|r| r.clip == MACHINE_EVENT_CLIP)
                .copied()
                .collect();
            v.sort_by_key(|r| r.character);
            v
        };
        assert_eq!(
            machine_events(&gpu_events),
            machine_events(&log.records),
            "frame {f}: events"
        );
        // The comparison fails on a wrong buffer.
        if !caught && let Some(i) = (0..n as usize).find(|&i| gpu_lists[i].count > 1) {
            let mut wrong = gpu_lists[i];
            wrong.samples[1].weight += 1e-3;
            assert!(!lists_close(&wrong, &lists[i]), "a wrong weight is caught");
            let mut wrong: GpuMachineState = gpu_states[i];
            wrong.time = wgpu_anim::layout::Ticks::new(wrong.time.get() + 1);
            assert_ne!(wrong, states[i], "a wrong clock is caught");
            caught = true;
        }
    }
    assert!(caught, "some frame blended two samples");
    assert!(
        kept > 0 && snapshots > 0 && inertial > 0,
        "kept {kept}, snapshots {snapshots}, inertialized {inertial}"
    );
}

/// What a state machine's crowd shows after a frame, as bits: each character's machine and
/// parameter slots, clock and palette.
fn crowd_state(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<u32> {
    let (states, slots) = a.read_machines_page(device, queue, 0).unwrap();
    let (clocks, pose) = a.read_back(device, queue).unwrap();
    let mut bits: Vec<u32> = bytemuck::cast_slice(&states).to_vec();
    bits.extend_from_slice(bytemuck::cast_slice(&slots));
    bits.extend_from_slice(bytemuck::cast_slice(&clocks));
    bits.extend_from_slice(bytemuck::cast_slice(&pose.palette));
    bits
}

/// A crowd following machines, its device lost mid-script: the rebuilt animator (its newest
/// checkpoint, then the frames since replayed) continues bit for bit as one that never lost its
/// device, machines, parameters (triggers consumed on the GPU included), clocks and palettes.
#[test]
fn machines_survive_a_lost_device() {
    let (lib, id) = library();
    let n = 32;
    let script = random_script(5, n, 40);
    let make = |device: &wgpu::Device| {
        let desc = AnimatorDesc::default().with_max_instances(n).with_inertialization(true);
        let mut a = Animator::new(device, &lib, &desc).unwrap();
        let clip = lib.clip_at(0).unwrap();
        for c in 0..n as usize {
            a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
            a.controller_mut().set_machine(c, Some(id)).unwrap();
        }
        a
    };
    let edit = |a: &mut Animator, f: u32| {
        for e in script.events.iter().filter(|e| e.frame == f) {
            if e.reset {
                a.controller_mut().reset_machine(e.character as usize).unwrap();
            }
            for (name, &value) in &e.set {
                a.controller_mut()
                    .set_parameter(e.character as usize, name, value)
                    .unwrap();
            }
        }
    };
    let run = |device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator| {
        a.prepare(queue, script.dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    };
    let (device_a, queue_a) = common::device();
    let (device_b, queue_b) = common::device();
    let mut lost = make(&device_a);
    lost.set_recovery(&device_a, std::num::NonZeroU32::new(4));
    let mut reference = make(&device_b);
    let lost_after = 23;
    for f in 0..lost_after {
        edit(&mut lost, f);
        run(&device_a, &queue_a, &mut lost);
        edit(&mut reference, f);
        run(&device_b, &queue_b, &mut reference);
    }
    edit(&mut lost, lost_after);
    edit(&mut reference, lost_after);
    device_a.destroy();
    let mut rebuilt = lost.rebuild(&device_b, &queue_b).unwrap();
    drop(lost);
    let mut transitions = 0;
    for f in lost_after..lost_after + 8 {
        if f > lost_after {
            edit(&mut rebuilt, f);
            edit(&mut reference, f);
        }
        run(&device_b, &queue_b, &mut rebuilt);
        run(&device_b, &queue_b, &mut reference);
        let (got, want) = (
            crowd_state(&device_b, &queue_b, &rebuilt),
            crowd_state(&device_b, &queue_b, &reference),
        );
        assert!(got == want, "frame {f}: the rebuilt crowd differs");
        let (states, _) = reference.read_machines_page(&device_b, &queue_b, 0).unwrap();
        transitions += states.iter().filter(|s| s.running().is_some()).count();
    }
    assert!(transitions > 0, "transitions ran across the rebuild");
}

/// What the animator reads back without waiting: every watched character's machine each frame
/// and its machine's events exactly once, as the CPU mirror's run of the same script.
#[test]
fn machines_and_their_events_come_back_without_waiting() {
    let (lib, id) = library();
    let (device, queue) = common::device();
    let n = 24;
    let script = random_script(6, n, 300);
    let cpu_run = simulate_cpu(&lib, id, &script).unwrap();
    let desc = AnimatorDesc::default().with_max_instances(n).with_inertialization(true);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    let clip = lib.clip_at(0).unwrap();
    for c in 0..n as usize {
        a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
        a.controller_mut().set_machine(c, Some(id)).unwrap();
    }
    a.watch_events(&device, 16 * n).unwrap();
    let everyone: Vec<usize> = (0..n as usize).collect();
    a.watch_machines(&device, &everyone).unwrap();
    let mut got = Vec::new();
    for f in 0..script.frames {
        for e in script.events.iter().filter(|e| e.frame == f) {
            if e.reset {
                a.controller_mut().reset_machine(e.character as usize).unwrap();
            }
            for (name, &value) in &e.set {
                a.controller_mut()
                    .set_parameter(e.character as usize, name, value)
                    .unwrap();
            }
        }
        a.prepare(&queue, script.dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        got.extend(a.take_readbacks());
    }
    a.wait_readbacks();
    got.extend(a.take_readbacks());
    assert!(got.len() as u32 + a.readback_skipped() as u32 >= script.frames - 1);
    let names = lib.machines().state_names(id).unwrap();
    let mut events = 0;
    for r in &got {
        // Frames count from 1; the script's from 0.
        let want = &cpu_run[r.frame as usize - 1];
        for (c, ms) in r.machines.iter().enumerate() {
            let w = &want.characters[c];
            assert_eq!(
                names[ms.playing().unwrap() as usize],
                w.state,
                "frame {}, character {c}",
                r.frame
            );
            assert!(
                (ms.normalized_time() - w.time).abs() <= 1e-6,
                "frame {}, character {c}",
                r.frame
            );
            assert_eq!(ms.running().map(|t| t.0), w.transition.as_ref().map(|t| t.index));
            let mine: Vec<String> = r
                .machine_events
                .iter()
                .filter(|(ch, _)| *ch == c as u32)
                .map(|(_, e)| wgpu_anim::layout::machine_event::NAMES[e.kind as usize].to_owned())
                .collect();
            let theirs: Vec<String> = w.events.iter().map(|e| e.kind.clone()).collect();
            assert_eq!(mine, theirs, "frame {}, character {c}: events", r.frame);
            events += mine.len();
        }
        assert!(
            r.events.iter().all(|e| e.clip != MACHINE_EVENT_CLIP),
            "clip events apart"
        );
    }
    assert!(events > 50, "{events} machine events read back");
}

/// A compute pass of the user's own writes a parameter slot before the animator's passes: the
/// clock pass of the same frame decides on it, as on a slot the controller set.
#[test]
fn a_users_pass_sets_parameters_the_same_frame_decides_on() {
    let (lib, id) = library();
    let (device, queue) = common::device();
    let n = 8u32;
    // A machine with inertialized transitions needs the room for them.
    let plain = AnimatorDesc::default().with_max_instances(n);
    let mut a = Animator::new(&device, &lib, &plain).unwrap();
    a.controller_mut()
        .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()))
        .unwrap();
    let refused = a.controller_mut().set_machine(0, Some(id)).unwrap_err().to_string();
    assert!(refused.contains("inertialization"), "{refused}");
    let desc = plain.with_inertialization(true);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    let clip = lib.clip_at(0).unwrap();
    for c in 0..n as usize {
        a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
        a.controller_mut().set_machine(c, Some(id)).unwrap();
    }
    // `vz` above 0.5 takes idle to loco (transition 2), for the even characters only.
    let (slot, _) = lib.machines().parameter(id, "vz").unwrap();
    let source = format!(
        "@group(0) @binding(0) var<storage, read_write> machine_parameters: array<array<u32, 16>>;
         @compute @workgroup_size(8)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
             if (id.x % 2u == 0u) {{ machine_parameters[id.x][{slot}] = bitcast<u32>(1.0); }}
         }}"
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(a.page_machine_parameter_buffer(0).unwrap()),
        }],
    });
    a.prepare(&queue, 1.0 / 32.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    let (states, slots) = a.read_machines_page(&device, &queue, 0).unwrap();
    for c in 0..n as usize {
        let moved = c % 2 == 0;
        assert_eq!(states[c].running().map(|t| t.0), moved.then_some(2), "character {c}");
        assert_eq!(f32::from_bits(slots[c][slot]), if moved { 1.0 } else { 0.0 });
    }
}
