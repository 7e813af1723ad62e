//! State machines against the project's state-machine reference: `wgpu-anim simulate` run on
//! small machines and scripts, on the CPU mirror of the rules and on the GPU (which must print
//! the same), every expected frame, state, time, weight and event derived by
//! hand from the reference's rules (dyadic `dt` and clip lengths, so every hit is exact); and the
//! refusals of `LibraryBuilder::add_state_machine`.
//!
//! Clips are rest-pose clips of exact lengths (`--clip a=1`): with `dt` = 1/16 and a clip of 1 s,
//! a state of speed 1 is at normalized time `(f + 1) / 16` after frame `f` when it started at 0.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use wgpu_anim::machine::{Condition, Motion, Parameter, State, StateMachine, Transition};
use wgpu_anim::{Error, LibraryBuilder};

// ---------------------------------------------------------------------------------------------
// Helpers: machines and scripts as JSON, the command, and what it printed.
// ---------------------------------------------------------------------------------------------

/// A fresh folder for one test's files.
fn temp_dir(test: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("wgpu-anim-machine-{test}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A machine: `parameters` and `states` as JSON arrays, its entry and its transitions.
fn machine(name: &str, parameters: Value, states: Value, entry: &str, transitions: &[Value]) -> Value {
    json!({
        "name": name,
        "parameters": parameters,
        "states": states,
        "entry": entry,
        "transitions": transitions,
    })
}

/// A looping state of speed 1 playing clip `clip`.
fn state(name: &str, clip: &str) -> Value {
    json!({"name": name, "motion": {"clip": clip}})
}

/// A state with more fields (`speed`, `speed_parameter`, `loop`).
fn state_with(name: &str, clip: &str, extra: Value) -> Value {
    let mut s = state(name, clip);
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

/// A transition of duration 0 from `from` (a state or `"Any"`) to `to`, with `extra` fields
/// (`conditions`, `exit_time`, `duration`, `offset`, `interruption`, `to_self`, ...).
fn transition(from: &str, to: &str, extra: Value) -> Value {
    let mut t = json!({"from": from, "to": to, "duration": 0.0});
    for (k, v) in extra.as_object().unwrap() {
        t[k] = v.clone();
    }
    t
}

/// A condition without a constant (`true`, `false`, `set`).
fn when(parameter: &str, test: &str) -> Value {
    json!({"parameter": parameter, "test": test})
}

/// A comparison (`greater`, `less`, `equals`, `not_equals`).
fn compare(parameter: &str, test: &str, value: f64) -> Value {
    json!({"parameter": parameter, "test": test, "value": value})
}

/// A script event: before frame `frame`, character `character` sets `set`.
fn set(frame: u32, character: u32, set: Value) -> Value {
    json!({"frame": frame, "character": character, "set": set})
}

/// A script of `frames` frames of `dt` for `characters` characters.
fn script(dt: f64, frames: u32, characters: u32, events: &[Value]) -> Value {
    json!({"dt": dt, "frames": frames, "characters": characters, "events": events})
}

const DT: f64 = 1.0 / 16.0;

/// A running transition as printed.
#[derive(Debug, PartialEq)]
struct Running {
    index: u64,
    source: String,
    destination: String,
    weight: f64,
    destination_time: f64,
}

/// What `wgpu-anim simulate` printed for one run.
struct Run {
    test: String,
    frames: Vec<Value>,
}

/// Writes `machine` and `script` into a fresh folder, runs `wgpu-anim simulate MACHINE --script
/// SCRIPT --cpu --json` with rest-pose clips `clips` (`NAME=SECONDS`) and parses what it prints;
/// runs it on the GPU too (without `--cpu`) and checks that both print the same states,
/// transitions and events, and times within 1e-6 ([`agree`]).
fn simulate(test: &str, machine: &Value, script: &Value, clips: &[&str]) -> Run {
    let dir = temp_dir(test);
    let (m, s) = (dir.join("machine.json"), dir.join("script.json"));
    std::fs::write(&m, serde_json::to_string_pretty(machine).unwrap()).unwrap();
    std::fs::write(&s, serde_json::to_string_pretty(script).unwrap()).unwrap();
    let run = |cpu: bool| -> Vec<Value> {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wgpu-anim"));
        command.arg("simulate").arg(&m).arg("--script").arg(&s).arg("--json");
        if cpu {
            command.arg("--cpu");
        }
        for clip in clips {
            command.args(["--clip", clip]);
        }
        let out = command.output().expect("the wgpu-anim binary runs");
        assert!(
            out.status.success(),
            "{test} ({}): simulate failed: {}",
            if cpu { "cpu" } else { "gpu" },
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("simulate prints JSON")
    };
    let frames = run(true);
    let gpu = run(false);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        frames.len() as u64,
        script["frames"].as_u64().unwrap(),
        "{test}: frame count"
    );
    if let Err(e) = agree(&frames, &gpu) {
        panic!("{test}: the GPU and the CPU mirror differ: {e}");
    }
    Run {
        test: test.into(),
        frames,
    }
}

/// Whether two runs printed the same states, transitions (index, source, destination) and
/// events, and times and weights within 1e-6; else where they first differ.
fn agree(a: &[Value], b: &[Value]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} frames against {}", a.len(), b.len()));
    }
    let close = |x: &Value, y: &Value| match (x.as_f64(), y.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6,
        _ => x == y,
    };
    for (fa, fb) in a.iter().zip(b) {
        let f = &fa["frame"];
        let (ca, cb) = (
            fa["characters"].as_array().unwrap(),
            fb["characters"].as_array().unwrap(),
        );
        if ca.len() != cb.len() {
            return Err(format!("frame {f}: {} characters against {}", ca.len(), cb.len()));
        }
        for (x, y) in ca.iter().zip(cb) {
            let c = &x["character"];
            let (tx, ty) = (&x["transition"], &y["transition"]);
            let same = x["state"] == y["state"]
                && x["events"] == y["events"]
                && close(&x["time"], &y["time"])
                && tx.is_null() == ty.is_null()
                && (tx.is_null()
                    || ["index", "source", "destination"].iter().all(|k| tx[k] == ty[k])
                        && close(&tx["weight"], &ty["weight"])
                        && close(&tx["destination_time"], &ty["destination_time"]));
            if !same {
                return Err(format!("frame {f}, character {c}: {x} against {y}"));
            }
        }
    }
    Ok(())
}

impl Run {
    /// Character `c` after frame `f`.
    fn at(&self, f: usize, c: u64) -> &Value {
        let frame = &self.frames[f];
        assert_eq!(frame["frame"].as_u64(), Some(f as u64), "{}: frame order", self.test);
        frame["characters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|ch| ch["character"].as_u64() == Some(c))
            .unwrap_or_else(|| panic!("{}: no character {c} in frame {f}", self.test))
    }

    /// The frame's events of character `c`, as `exited S`, `started I`, `entered S`, `ended I`.
    fn events(&self, f: usize, c: u64) -> Vec<String> {
        self.at(f, c)["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| match e["kind"].as_str().unwrap() {
                "state_exited" => format!("exited {}", e["state"].as_str().unwrap()),
                "state_entered" => format!("entered {}", e["state"].as_str().unwrap()),
                "transition_started" => format!("started {}", e["transition"]),
                "transition_ended" => format!("ended {}", e["transition"]),
                other => panic!("{}: unknown event kind {other}", self.test),
            })
            .collect()
    }

    /// Every event of character `c` over the run, with its frame, in order.
    fn log(&self, c: u64) -> Vec<(usize, String)> {
        (0..self.frames.len())
            .flat_map(|f| self.events(f, c).into_iter().map(move |e| (f, e)))
            .collect()
    }

    /// The transition running after frame `f`.
    fn running(&self, f: usize, c: u64) -> Option<Running> {
        let t = &self.at(f, c)["transition"];
        (!t.is_null()).then(|| Running {
            index: t["index"].as_u64().unwrap(),
            source: t["source"].as_str().unwrap().into(),
            destination: t["destination"].as_str().unwrap().into(),
            weight: t["weight"].as_f64().unwrap(),
            destination_time: t["destination_time"].as_f64().unwrap(),
        })
    }

    /// After frame `f`, character `c` is in `state` at normalized time `time` and no transition
    /// runs.
    fn settled(&self, f: usize, c: u64, state: &str, time: f64) {
        self.showing(f, c, state, time);
        assert_eq!(self.running(f, c), None, "{}: frame {f} character {c}", self.test);
    }

    /// After frame `f`, character `c` reports `state` at normalized time `time`.
    fn showing(&self, f: usize, c: u64, state: &str, time: f64) {
        let ch = self.at(f, c);
        assert_eq!(
            (ch["state"].as_str().unwrap(), ch["time"].as_f64().unwrap()),
            (state, time),
            "{}: frame {f} character {c}",
            self.test
        );
    }

    /// After frame `f`, character `c` reports `state` at `time` while transition `index` runs
    /// to `destination`, its weight `weight` and the destination at `destination_time`.
    #[expect(clippy::too_many_arguments, reason = "one printed record, field by field")]
    fn blending(
        &self,
        f: usize,
        c: u64,
        state: &str,
        time: f64,
        index: u64,
        destination: &str,
        weight: f64,
        destination_time: f64,
    ) {
        self.showing(f, c, state, time);
        let expected = Running {
            index,
            source: state.into(),
            destination: destination.into(),
            weight,
            destination_time,
        };
        assert_eq!(
            self.running(f, c),
            Some(expected),
            "{}: frame {f} character {c}",
            self.test
        );
    }
}

/// The log of a run: `(frame, events)` pairs flattened.
fn log(entries: &[(usize, &[&str])]) -> Vec<(usize, String)> {
    entries
        .iter()
        .flat_map(|&(f, events)| events.iter().map(move |e| (f, (*e).to_string())))
        .collect()
}

/// The four events of transition `index` from `from` to `to` of duration 0, in the reference's
/// order (rule 7: exited, started, entered, ended).
fn instant(from: &str, index: u64, to: &str) -> [String; 4] {
    [
        format!("exited {from}"),
        format!("started {index}"),
        format!("entered {to}"),
        format!("ended {index}"),
    ]
}

/// `instant` on frame `f`, for a log.
fn instant_at(f: usize, from: &str, index: u64, to: &str) -> Vec<(usize, String)> {
    instant(from, index, to).into_iter().map(|e| (f, e)).collect()
}

// ---------------------------------------------------------------------------------------------
// 1. Exit points.
// ---------------------------------------------------------------------------------------------

/// Rule 3 (exit points `e, e + 1, …` for `e < 1`, checked once per loop on the frame that crosses
/// it; a false condition waits for the next loop) and detail 4 (the interval is open on the left).
/// `a` (1 s) reaches 0.5 on frame 7 while `go` is false; `go` is set before frame 8, whose
/// interval (0.5, 0.5625] does not contain 0.5, so the transition waits for 1.5 (frame 23).
#[test]
fn an_exit_point_is_checked_once_per_loop_and_a_false_condition_waits_for_the_next() {
    let m = machine(
        "exit_loops",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "b")]),
        "a",
        &[transition(
            "a",
            "b",
            json!({"exit_time": 0.5, "conditions": [when("go", "true")]}),
        )],
    );
    let s = script(DT, 28, 1, &[set(8, 0, json!({"go": true}))]);
    let run = simulate("exit_loops", &m, &s, &["a=1", "b=1"]);
    run.settled(7, 0, "a", 0.5);
    run.settled(8, 0, "a", 0.5625);
    run.settled(22, 0, "a", 1.4375);
    run.settled(23, 0, "b", 0.0);
    run.settled(24, 0, "b", 0.0625);
    assert_eq!(run.log(0), instant_at(23, "a", 0, "b"));
}

/// Rule 3: with `e >= 1` the only exit point is `e`, even in a looping state. Character 0 (`go`
/// from the start) leaves on frame 23 (t = 1.5); character 1 sets `go` after 1.5 was crossed and
/// never leaves, though it passes 2.5 (frame 39). With `e = 1` (transition 1, on `go1`),
/// character 3 leaves on frame 15 (t = 1), character 2, late, never (2.0 is no point).
#[test]
fn an_exit_time_of_one_or_more_is_checked_once_only() {
    let m = machine(
        "exit_once",
        json!([{"name": "go", "kind": "bool"}, {"name": "go1", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "b")]),
        "a",
        &[
            transition("a", "b", json!({"exit_time": 1.5, "conditions": [when("go", "true")]})),
            transition("a", "b", json!({"exit_time": 1.0, "conditions": [when("go1", "true")]})),
        ],
    );
    let s = script(
        DT,
        48,
        4,
        &[
            set(0, 0, json!({"go": true})),
            set(24, 1, json!({"go": true})),
            set(16, 2, json!({"go1": true})),
            set(0, 3, json!({"go1": true})),
        ],
    );
    let run = simulate("exit_once", &m, &s, &["a=1", "b=1"]);
    run.settled(22, 0, "a", 1.4375);
    run.settled(23, 0, "b", 0.0);
    assert_eq!(run.log(0), instant_at(23, "a", 0, "b"));
    run.settled(47, 1, "a", 3.0);
    assert_eq!(run.log(1), vec![]);
    run.settled(47, 2, "a", 3.0);
    assert_eq!(run.log(2), vec![]);
    run.settled(14, 3, "a", 0.9375);
    assert_eq!(run.log(3), instant_at(15, "a", 1, "b"));
}

/// Detail 4: exit points are absolute normalized times. Entered at offset 0.5 with `e = 0.25` the
/// first point is 1.25 (frame 12 after entering on frame 0); entered at offset 0.5 with `e = 0.5`,
/// the state started exactly on a point and has not crossed it: the first is 1.5 (frame 16).
#[test]
fn exit_points_are_absolute_and_a_state_started_on_one_has_not_crossed_it() {
    let m = machine(
        "exit_absolute",
        json!([{"name": "go", "kind": "trigger"}, {"name": "go2", "kind": "trigger"}]),
        json!([state("s", "a"), state("a", "a"), state("c", "a"), state("b", "b")]),
        "s",
        &[
            transition("s", "a", json!({"conditions": [when("go", "set")], "offset": 0.5})),
            transition("s", "c", json!({"conditions": [when("go2", "set")], "offset": 0.5})),
            transition("a", "b", json!({"exit_time": 0.25})),
            transition("c", "b", json!({"exit_time": 0.5})),
        ],
    );
    let s = script(
        DT,
        24,
        2,
        &[set(0, 0, json!({"go": true})), set(0, 1, json!({"go2": true}))],
    );
    let run = simulate("exit_absolute", &m, &s, &["a=1", "b=1"]);
    run.settled(0, 0, "a", 0.5);
    run.settled(11, 0, "a", 1.1875);
    run.settled(12, 0, "b", 0.0);
    let mut expected = instant_at(0, "s", 0, "a");
    expected.extend(instant_at(12, "a", 2, "b"));
    assert_eq!(run.log(0), expected);

    run.settled(0, 1, "c", 0.5);
    run.settled(1, 1, "c", 0.5625);
    run.settled(15, 1, "c", 1.4375);
    run.settled(16, 1, "b", 0.0);
    let mut expected = instant_at(0, "s", 1, "c");
    expected.extend(instant_at(16, "c", 3, "b"));
    assert_eq!(run.log(1), expected);
}

/// Detail 4: several points crossed in one long frame fire once. At speed 40 a 1 s clip advances
/// 2.5 loops a frame (crossing 0.5, 1.5 and 2.5 on frame 0): the transition to itself fires once
/// a frame, restarting at 0 each time.
#[test]
fn several_exit_points_crossed_in_one_frame_fire_once() {
    let m = machine(
        "exit_long_frame",
        json!([]),
        json!([state_with("a", "a", json!({"speed": 40.0}))]),
        "a",
        &[transition("a", "a", json!({"exit_time": 0.5}))],
    );
    let s = script(DT, 4, 1, &[]);
    let run = simulate("exit_long_frame", &m, &s, &["a=1"]);
    for f in 0..4 {
        run.settled(f, 0, "a", 0.0);
        assert_eq!(run.events(f, 0), instant("a", 0, "a"), "frame {f}");
    }
}

/// Detail 4: a zero advance crosses nothing (and the speed parameter of detail 2). With its speed
/// parameter 0 the state sits at t = 0, itself a point of `e = 0`, for 10 frames without firing;
/// from frame 10 it advances 1/16 a frame and crosses 1.0 on frame 25.
#[test]
fn a_zero_advance_crosses_nothing() {
    let m = machine(
        "exit_zero_advance",
        json!([{"name": "rate", "kind": "float", "default": 0.0}]),
        json!([
            state_with("a", "a", json!({"speed_parameter": "rate"})),
            state("b", "b")
        ]),
        "a",
        &[transition("a", "b", json!({"exit_time": 0.0}))],
    );
    let s = script(DT, 28, 1, &[set(10, 0, json!({"rate": 1.0}))]);
    let run = simulate("exit_zero_advance", &m, &s, &["a=1", "b=1"]);
    for f in 0..10 {
        run.settled(f, 0, "a", 0.0);
    }
    run.settled(10, 0, "a", 0.0625);
    run.settled(24, 0, "a", 0.9375);
    run.settled(25, 0, "b", 0.0);
    assert_eq!(run.log(0), instant_at(25, "a", 0, "b"));
}

// ---------------------------------------------------------------------------------------------
// 2. One transition per frame; a transition's end; durations and weights.
// ---------------------------------------------------------------------------------------------

/// Rule 2: at most one transition a frame, so a chain A→B→C of duration 0 takes two frames; and
/// rule 7 of the details: duration 0 emits exited, started, entered, ended on the fire frame, the
/// destination at its offset (not also advanced).
#[test]
fn a_chain_of_instant_transitions_takes_one_frame_each() {
    let m = machine(
        "chain",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "a"), state("c", "a")]),
        "a",
        &[
            transition("a", "b", json!({"conditions": [when("go", "true")]})),
            transition("b", "c", json!({"conditions": [when("go", "true")]})),
        ],
    );
    let s = script(DT, 6, 1, &[set(2, 0, json!({"go": true}))]);
    let run = simulate("chain", &m, &s, &["a=1"]);
    run.settled(1, 0, "a", 0.125);
    run.settled(2, 0, "b", 0.0);
    run.settled(3, 0, "c", 0.0);
    run.settled(4, 0, "c", 0.0625);
    let mut expected = instant_at(2, "a", 0, "b");
    expected.extend(instant_at(3, "b", 1, "c"));
    assert_eq!(run.log(0), expected);
}

/// Detail 6: progress is 0 on the fire frame and grows by `dt`; when it reaches the duration the
/// transition ends in that frame's step 1 (entered, ended) and step 2 of the same frame chooses
/// from the destination's list. A→B (0.125 s) fires on frame 0 and ends on frame 2, where B→C
/// (duration 0) fires too.
#[test]
fn a_transition_that_ends_lets_its_destination_choose_in_the_same_frame() {
    let m = machine(
        "end_then_choose",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "a"), state("c", "a")]),
        "a",
        &[
            transition("a", "b", json!({"conditions": [when("go", "true")], "duration": 0.125})),
            transition("b", "c", json!({"conditions": [when("go", "true")]})),
        ],
    );
    let s = script(DT, 4, 1, &[set(0, 0, json!({"go": true}))]);
    let run = simulate("end_then_choose", &m, &s, &["a=1"]);
    run.blending(0, 0, "a", 0.0625, 0, "b", 0.0, 0.0);
    run.blending(1, 0, "a", 0.125, 0, "b", 0.5, 0.0625);
    run.settled(2, 0, "c", 0.0);
    run.settled(3, 0, "c", 0.0625);
    assert_eq!(
        run.log(0),
        log(&[
            (0, &["exited a", "started 0"]),
            (
                2,
                &["entered b", "ended 0", "exited b", "started 1", "entered c", "ended 1"]
            ),
        ])
    );
}

/// Detail 6: weight = min(1, progress / duration), 0 on the fire frame, progress growing by `dt`
/// whatever the states' speeds, a curve shaping the pose only. `dt` = 1/32, duration 0.25 s:
/// fired on frame 3, the weight is k/8 on frame 3 + k and the transition ends on frame 11. The
/// source (speed 2) is at (f + 1)/16, the destination (speed 0.5) at k/64.
#[test]
fn the_weight_is_progress_over_duration() {
    let m = machine(
        "weights",
        json!([{"name": "go", "kind": "bool"}]),
        json!([
            state_with("a", "a", json!({"speed": 2.0})),
            state_with("b", "b", json!({"speed": 0.5}))
        ]),
        "a",
        &[transition(
            "a",
            "b",
            json!({
                "conditions": [when("go", "true")],
                "duration": 0.25,
                "blending": {"cross_fade": {"curve": "smooth"}}
            }),
        )],
    );
    let s = script(1.0 / 32.0, 16, 1, &[set(3, 0, json!({"go": true}))]);
    let run = simulate("weights", &m, &s, &["a=1", "b=1"]);
    run.settled(2, 0, "a", 3.0 / 16.0);
    for k in 0..8 {
        let f = 3 + k;
        run.blending(
            f,
            0,
            "a",
            (f + 1) as f64 / 16.0,
            0,
            "b",
            k as f64 / 8.0,
            k as f64 / 64.0,
        );
    }
    run.settled(11, 0, "b", 0.125);
    run.settled(12, 0, "b", 0.125 + 1.0 / 64.0);
    assert_eq!(
        run.log(0),
        log(&[(3, &["exited a", "started 0"]), (11, &["entered b", "ended 0"])])
    );
}

/// Detail 7: `fixed_duration` false: seconds = duration × the source motion's length, speed not
/// applied. 0.25 of a 2 s clip played at speed 2 is 0.5 s: 8 frames of 1/16, so the weight is k/8
/// on frame k and the transition ends on frame 8 (not 4, as it would with the speed applied).
#[test]
fn a_normalized_duration_is_a_fraction_of_the_source_length() {
    let m = machine(
        "normalized_duration",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state_with("a", "l", json!({"speed": 2.0})), state("b", "b")]),
        "a",
        &[transition(
            "a",
            "b",
            json!({"conditions": [when("go", "true")], "duration": 0.25, "fixed_duration": false}),
        )],
    );
    let s = script(DT, 10, 1, &[set(0, 0, json!({"go": true}))]);
    let run = simulate("normalized_duration", &m, &s, &["l=2", "b=1"]);
    for k in 0..8 {
        run.blending(
            k,
            0,
            "a",
            (k + 1) as f64 / 16.0,
            0,
            "b",
            k as f64 / 8.0,
            k as f64 / 16.0,
        );
    }
    run.settled(8, 0, "b", 0.5);
    assert_eq!(
        run.log(0),
        log(&[(0, &["exited a", "started 0"]), (8, &["entered b", "ended 0"])])
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Any first; 4. to_self.
// ---------------------------------------------------------------------------------------------

/// Rule 2: the Any transitions come first, in the order authored, then the state's own: with `go`
/// true, Any→c (1) beats a→b (0) and Any→d (2); in c, Any→c is skipped (its `to` is the state
/// playing, no `to_self`) and Any→d fires; in d, Any→c again.
#[test]
fn any_transitions_come_first_in_the_order_authored() {
    let m = machine(
        "any_first",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "a"), state("c", "a"), state("d", "a")]),
        "a",
        &[
            transition("a", "b", json!({"conditions": [when("go", "true")]})),
            transition("Any", "c", json!({"conditions": [when("go", "true")]})),
            transition("Any", "d", json!({"conditions": [when("go", "true")]})),
        ],
    );
    let s = script(DT, 4, 1, &[set(1, 0, json!({"go": true}))]);
    let run = simulate("any_first", &m, &s, &["a=1"]);
    run.settled(0, 0, "a", 0.0625);
    run.settled(1, 0, "c", 0.0);
    run.settled(2, 0, "d", 0.0);
    run.settled(3, 0, "c", 0.0);
    let mut expected = instant_at(1, "a", 1, "c");
    expected.extend(instant_at(2, "c", 2, "d"));
    expected.extend(instant_at(3, "d", 1, "c"));
    assert_eq!(run.log(0), expected);
}

/// Rule 2 and detail 3: an Any transition to the state playing is skipped unless `to_self`; with
/// `to_self` it restarts the destination clock while the source keeps running. Character 0's
/// `kick` never fires; character 1's `hop` fires on frame 3 (a at 0.25, the new a at 0) and ends
/// on frame 7 (0.25 s later), where a is at the destination's 0.25.
#[test]
fn an_any_transition_to_the_state_playing_needs_to_self() {
    let m = machine(
        "to_self",
        json!([{"name": "kick", "kind": "trigger"}, {"name": "hop", "kind": "trigger"}]),
        json!([state("a", "a")]),
        "a",
        &[
            transition(
                "Any",
                "a",
                json!({"conditions": [when("kick", "set")], "duration": 0.25}),
            ),
            transition(
                "Any",
                "a",
                json!({"conditions": [when("hop", "set")], "duration": 0.25, "to_self": true}),
            ),
        ],
    );
    let s = script(
        DT,
        10,
        2,
        &[set(3, 0, json!({"kick": true})), set(3, 1, json!({"hop": true}))],
    );
    let run = simulate("to_self", &m, &s, &["a=1"]);
    for f in 0..10 {
        run.settled(f, 0, "a", (f + 1) as f64 / 16.0);
    }
    assert_eq!(run.log(0), vec![]);

    run.settled(2, 1, "a", 0.1875);
    run.blending(3, 1, "a", 0.25, 1, "a", 0.0, 0.0);
    run.blending(4, 1, "a", 0.3125, 1, "a", 0.25, 0.0625);
    run.blending(6, 1, "a", 0.4375, 1, "a", 0.75, 0.1875);
    run.settled(7, 1, "a", 0.25);
    run.settled(8, 1, "a", 0.3125);
    assert_eq!(
        run.log(1),
        log(&[(3, &["exited a", "started 1"]), (7, &["entered a", "ended 1"])])
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Interruption.
// ---------------------------------------------------------------------------------------------

/// a→b (0.5 s, interruption `mode`, fired on frame 0 by `go`) and would-be interrupters, each
/// 0.25 s: Any→c on trigger `x`, a→d (the source's) on `y`, b→d (the destination's) on `z`, a
/// second a→b (4, offset 0.5) on `w`, and Any→d (5) on `v` at exit time 0.25. Characters 0 to 3
/// set x, y, z or w before frame 4; character 4 sets v before frame 0. While a→b runs, a's clock
/// is at (f + 1)/16 and b's at f/16: a crosses 0.25 on frame 3, b on frame 4.
fn interruption_run(mode: &str) -> Run {
    let m = machine(
        &format!("interrupt_{mode}"),
        json!([
            {"name": "go", "kind": "bool"},
            {"name": "x", "kind": "trigger"},
            {"name": "y", "kind": "trigger"},
            {"name": "z", "kind": "trigger"},
            {"name": "w", "kind": "trigger"},
            {"name": "v", "kind": "trigger"}
        ]),
        json!([state("a", "a"), state("b", "a"), state("c", "a"), state("d", "a")]),
        "a",
        &[
            transition(
                "a",
                "b",
                json!({"conditions": [when("go", "true")], "duration": 0.5, "interruption": mode}),
            ),
            transition("Any", "c", json!({"conditions": [when("x", "set")], "duration": 0.25})),
            transition("a", "d", json!({"conditions": [when("y", "set")], "duration": 0.25})),
            transition("b", "d", json!({"conditions": [when("z", "set")], "duration": 0.25})),
            transition(
                "a",
                "b",
                json!({"conditions": [when("w", "set")], "duration": 0.25, "offset": 0.5}),
            ),
            transition(
                "Any",
                "d",
                json!({"conditions": [when("v", "set")], "duration": 0.25, "exit_time": 0.25}),
            ),
        ],
    );
    let mut events: Vec<Value> = (0..5).map(|c| set(0, c, json!({"go": true}))).collect();
    events.push(set(4, 0, json!({"x": true})));
    events.push(set(4, 1, json!({"y": true})));
    events.push(set(4, 2, json!({"z": true})));
    events.push(set(4, 3, json!({"w": true})));
    events.push(set(0, 4, json!({"v": true})));
    let s = script(DT, 14, 5, &events);
    simulate(&format!("interrupt_{mode}"), &m, &s, &["a=1"])
}

/// Rule 2, interruption `None`: nothing interrupts; a→b ends on frame 8 (progress 0.5), and on
/// that frame b's full list fires: Any→c for x, b→d for z (detail 6); y is only a's.
#[test]
fn interruption_none_lets_nothing_interrupt() {
    let run = interruption_run("none");
    for c in 0..3 {
        run.blending(4, c, "a", 0.3125, 0, "b", 0.5, 0.25);
        run.blending(7, c, "a", 0.5, 0, "b", 0.875, 0.4375);
    }
    let start = (0, &["exited a", "started 0"][..]);
    assert_eq!(
        run.log(0),
        log(&[
            start,
            (8, &["entered b", "ended 0", "exited b", "started 1"]),
            (12, &["entered c", "ended 1"]),
        ])
    );
    run.blending(8, 0, "b", 0.5, 1, "c", 0.0, 0.0);
    assert_eq!(run.log(1), log(&[start, (8, &["entered b", "ended 0"])]));
    run.settled(8, 1, "b", 0.5);
    assert_eq!(
        run.log(2),
        log(&[
            start,
            (8, &["entered b", "ended 0", "exited b", "started 3"]),
            (12, &["entered d", "ended 3"]),
        ])
    );
    // w and v wait: a→b (4) is a's; in b, Any→d's next point on b's clock is 1.25 (frame 20).
    for c in 3..5 {
        assert_eq!(
            run.log(c),
            log(&[start, (8, &["entered b", "ended 0"])]),
            "character {c}"
        );
        run.settled(13, c, "b", 0.8125);
    }
}

/// Rule 2 and details 8–9, interruption `Source`: the Any transitions, then the source's (a's).
/// Any→c interrupts on frame 4, its source the running destination b (b's clock, 0.25); a→d
/// interrupts from a (a's clock, 0.3125); b→d is no candidate and waits for a→b's end. The
/// interrupting frame emits exited(source), started(new); a→b never emits ended.
#[test]
fn interruption_source_lets_any_then_the_source_interrupt() {
    let run = interruption_run("source");
    let start = (0, &["exited a", "started 0"][..]);
    run.blending(4, 0, "b", 0.25, 1, "c", 0.0, 0.0);
    run.settled(8, 0, "c", 0.25);
    assert_eq!(
        run.log(0),
        log(&[start, (4, &["exited b", "started 1"]), (8, &["entered c", "ended 1"])])
    );
    run.blending(4, 1, "a", 0.3125, 2, "d", 0.0, 0.0);
    run.blending(7, 1, "a", 0.5, 2, "d", 0.75, 0.1875);
    run.settled(8, 1, "d", 0.25);
    assert_eq!(
        run.log(1),
        log(&[start, (4, &["exited a", "started 2"]), (8, &["entered d", "ended 2"])])
    );
    run.blending(4, 2, "a", 0.3125, 0, "b", 0.5, 0.25);
    assert_eq!(
        run.log(2),
        log(&[
            start,
            (8, &["entered b", "ended 0", "exited b", "started 3"]),
            (12, &["entered d", "ended 3"]),
        ])
    );
    // Detail 9: another transition to the running destination (a→b, 4) may fire and restart it,
    // at its offset 0.5.
    run.blending(4, 3, "a", 0.3125, 4, "b", 0.0, 0.5);
    run.settled(8, 3, "b", 0.75);
    assert_eq!(
        run.log(3),
        log(&[start, (4, &["exited a", "started 4"]), (8, &["entered b", "ended 4"])])
    );
    // Detail 8: an Any transition's exit condition reads the running destination's clock: b
    // crosses 0.25 on frame 4 (a did on frame 3).
    run.blending(3, 4, "a", 0.25, 0, "b", 0.375, 0.1875);
    run.blending(4, 4, "b", 0.25, 5, "d", 0.0, 0.0);
    assert_eq!(
        run.log(4),
        log(&[start, (4, &["exited b", "started 5"]), (8, &["entered d", "ended 5"])])
    );
}

/// Rule 2 and details 8–9, interruption `Destination`: the Any transitions, then the
/// destination's (b's). Any→c and b→d interrupt on frame 4 from b (b's clock, 0.25); a→d is no
/// candidate, and y is left set with nothing to use it.
#[test]
fn interruption_destination_lets_any_then_the_destination_interrupt() {
    let run = interruption_run("destination");
    let start = (0, &["exited a", "started 0"][..]);
    run.blending(4, 0, "b", 0.25, 1, "c", 0.0, 0.0);
    run.settled(8, 0, "c", 0.25);
    assert_eq!(
        run.log(0),
        log(&[start, (4, &["exited b", "started 1"]), (8, &["entered c", "ended 1"])])
    );
    run.blending(4, 1, "a", 0.3125, 0, "b", 0.5, 0.25);
    run.settled(8, 1, "b", 0.5);
    run.settled(13, 1, "b", 0.8125);
    assert_eq!(run.log(1), log(&[start, (8, &["entered b", "ended 0"])]));
    run.blending(4, 2, "b", 0.25, 3, "d", 0.0, 0.0);
    run.settled(8, 2, "d", 0.25);
    assert_eq!(
        run.log(2),
        log(&[start, (4, &["exited b", "started 3"]), (8, &["entered d", "ended 3"])])
    );
    // a→b (4) is a's: no candidate.
    assert_eq!(run.log(3), log(&[start, (8, &["entered b", "ended 0"])]));
    // Detail 8: Any→d's exit condition reads b's clock, which crosses 0.25 on frame 4.
    run.blending(3, 4, "a", 0.25, 0, "b", 0.375, 0.1875);
    run.blending(4, 4, "b", 0.25, 5, "d", 0.0, 0.0);
    assert_eq!(
        run.log(4),
        log(&[start, (4, &["exited b", "started 5"]), (8, &["entered d", "ended 5"])])
    );
}

/// Detail 9: the running transition is never its own candidate. Any→c (`to_self`, interruption
/// `Source`, 0.25 s) on a bool that stays true would otherwise restart itself every frame; it runs
/// its 4 frames, ends, and fires again from c on the frame it ends.
#[test]
fn the_running_transition_is_never_its_own_candidate() {
    let m = machine(
        "not_own_candidate",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("c", "a")]),
        "a",
        &[transition(
            "Any",
            "c",
            json!({
                "conditions": [when("go", "true")],
                "duration": 0.25,
                "interruption": "source",
                "to_self": true
            }),
        )],
    );
    let s = script(DT, 10, 1, &[set(0, 0, json!({"go": true}))]);
    let run = simulate("not_own_candidate", &m, &s, &["a=1"]);
    for k in 0..4 {
        run.blending(
            k,
            0,
            "a",
            (k + 1) as f64 / 16.0,
            0,
            "c",
            k as f64 / 4.0,
            k as f64 / 16.0,
        );
    }
    run.blending(4, 0, "c", 0.25, 0, "c", 0.0, 0.0);
    run.blending(5, 0, "c", 0.3125, 0, "c", 0.25, 0.0625);
    assert_eq!(
        run.log(0),
        log(&[
            (0, &["exited a", "started 0"]),
            (4, &["entered c", "ended 0", "exited c", "started 0"]),
            (8, &["entered c", "ended 0", "exited c", "started 0"]),
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Triggers.
// ---------------------------------------------------------------------------------------------

/// Rule 4 and detail 11: a fired transition clears the triggers in its conditions; a trigger in a
/// candidate that did not fire stays set; setting it twice is once; `false` resets it.
/// Transitions: 0 a→b [t, hold]; 1 a→c [u]; 2 b→a [t]; 3 b→c [u].
/// - character 0: t before frame 2 (hold false: 0 cannot fire, t stays), hold before 5: 0 fires
///   on 5 and consumes t, so 2 waits in b until t is set again (frame 8); back in a, 0 does not
///   fire again (2 consumed t).
/// - character 1: t set before frames 1 and 2, hold before 4: 0 fires on 4 and b→a never does.
/// - character 2: t set before 1, reset before 3, hold before 4: nothing fires.
/// - character 3: t, u and hold before 1: 0 fires on 1 (u, in candidate 1, stays), 3 on 2.
#[test]
fn triggers_are_consumed_only_by_the_transition_that_fires() {
    let m = machine(
        "triggers",
        json!([
            {"name": "t", "kind": "trigger"},
            {"name": "u", "kind": "trigger"},
            {"name": "hold", "kind": "bool"}
        ]),
        json!([state("a", "a"), state("b", "a"), state("c", "a")]),
        "a",
        &[
            transition(
                "a",
                "b",
                json!({"conditions": [when("t", "set"), when("hold", "true")]}),
            ),
            transition("a", "c", json!({"conditions": [when("u", "set")]})),
            transition("b", "a", json!({"conditions": [when("t", "set")]})),
            transition("b", "c", json!({"conditions": [when("u", "set")]})),
        ],
    );
    let s = script(
        DT,
        12,
        4,
        &[
            set(2, 0, json!({"t": true})),
            set(5, 0, json!({"hold": true})),
            set(8, 0, json!({"t": true})),
            set(1, 1, json!({"t": true})),
            set(2, 1, json!({"t": true})),
            set(4, 1, json!({"hold": true})),
            set(1, 2, json!({"t": true})),
            set(3, 2, json!({"t": false})),
            set(4, 2, json!({"hold": true})),
            set(1, 3, json!({"t": true, "u": true, "hold": true})),
        ],
    );
    let run = simulate("triggers", &m, &s, &["a=1"]);
    let mut expected = instant_at(5, "a", 0, "b");
    expected.extend(instant_at(8, "b", 2, "a"));
    assert_eq!(run.log(0), expected);
    run.settled(7, 0, "b", 0.125);
    run.settled(11, 0, "a", 0.1875);

    assert_eq!(run.log(1), instant_at(4, "a", 0, "b"));
    run.settled(11, 1, "b", 0.4375);

    assert_eq!(run.log(2), vec![]);
    run.settled(11, 2, "a", 0.75);

    let mut expected = instant_at(1, "a", 0, "b");
    expected.extend(instant_at(2, "b", 3, "c"));
    assert_eq!(run.log(3), expected);
}

// ---------------------------------------------------------------------------------------------
// 7. Reversed states; 8. a non-looping state's end.
// ---------------------------------------------------------------------------------------------

/// Rule 3 and detail 5: in a reversed state the forward rule applies to the mirrored clock 1 − t.
/// r (speed −1, looping) entered at offset 1 is at 1 − k/16 on frame k; with e = 0.25 the mirrored
/// clock crosses 0.25 at t = 0.75 (frame 4) and 1.25 at t = −0.25 (frame 20). rn (speed −1, not
/// looping) entered at 0.5 reaches its end 0 on frame 8, where e = 1 fires; later it crosses
/// nothing.
/// - character 0: into r, ok from the start: leaves on frame 4.
/// - character 1: into r, ok from frame 5: waits for the next loop, leaves on frame 20.
/// - character 2: into rn, ok from the start: leaves on frame 8.
/// - character 3: into rn, ok from frame 9: never leaves, clamped at 0.
#[test]
fn reversed_states_use_the_mirrored_clock() {
    let m = machine(
        "reversed",
        json!([
            {"name": "go", "kind": "trigger"},
            {"name": "go2", "kind": "trigger"},
            {"name": "ok", "kind": "bool"}
        ]),
        json!([
            state("s", "a"),
            state_with("r", "a", json!({"speed": -1.0})),
            state_with("rn", "a", json!({"speed": -1.0, "loop": false})),
            state("b", "b")
        ]),
        "s",
        &[
            transition("s", "r", json!({"conditions": [when("go", "set")], "offset": 1.0})),
            transition("s", "rn", json!({"conditions": [when("go2", "set")], "offset": 0.5})),
            transition("r", "b", json!({"conditions": [when("ok", "true")], "exit_time": 0.25})),
            transition("rn", "b", json!({"conditions": [when("ok", "true")], "exit_time": 1.0})),
        ],
    );
    let s = script(
        DT,
        24,
        4,
        &[
            set(0, 0, json!({"go": true, "ok": true})),
            set(0, 1, json!({"go": true})),
            set(5, 1, json!({"ok": true})),
            set(0, 2, json!({"go2": true, "ok": true})),
            set(0, 3, json!({"go2": true})),
            set(9, 3, json!({"ok": true})),
        ],
    );
    let run = simulate("reversed", &m, &s, &["a=1", "b=1"]);
    run.settled(0, 0, "r", 1.0);
    run.settled(3, 0, "r", 0.8125);
    run.settled(4, 0, "b", 0.0);
    let mut expected = instant_at(0, "s", 0, "r");
    expected.extend(instant_at(4, "r", 2, "b"));
    assert_eq!(run.log(0), expected);

    run.settled(4, 1, "r", 0.75);
    run.settled(16, 1, "r", 0.0);
    run.settled(19, 1, "r", -0.1875);
    run.settled(20, 1, "b", 0.0);
    let mut expected = instant_at(0, "s", 0, "r");
    expected.extend(instant_at(20, "r", 2, "b"));
    assert_eq!(run.log(1), expected);

    run.settled(0, 2, "rn", 0.5);
    run.settled(7, 2, "rn", 0.0625);
    run.settled(8, 2, "b", 0.0);
    let mut expected = instant_at(0, "s", 1, "rn");
    expected.extend(instant_at(8, "rn", 3, "b"));
    assert_eq!(run.log(2), expected);

    for f in 8..24 {
        run.settled(f, 3, "rn", 0.0);
    }
    assert_eq!(run.log(3), instant_at(0, "s", 1, "rn"));
}

/// Rule 3 and detail 5: a state that does not loop stops at t = 1; e = 1 fires on the frame that
/// reaches the end (frame 15 for a 1 s clip), e > 1 never, and a finished state waits for a
/// condition-only transition. Transitions: 0 n→b [ok] at e = 1; 1 n→c at e = 1.25; 2 n→d [fin].
/// Character 0 has ok from the start; character 1 sets ok after the end (frame 16), which is too
/// late, and fin before frame 24.
#[test]
fn a_state_that_does_not_loop_ends_once() {
    let m = machine(
        "non_looping",
        json!([{"name": "ok", "kind": "bool"}, {"name": "fin", "kind": "bool"}]),
        json!([
            state_with("n", "a", json!({"loop": false})),
            state("b", "a"),
            state("c", "a"),
            state("d", "a")
        ]),
        "n",
        &[
            transition("n", "b", json!({"conditions": [when("ok", "true")], "exit_time": 1.0})),
            transition("n", "c", json!({"exit_time": 1.25})),
            transition("n", "d", json!({"conditions": [when("fin", "true")]})),
        ],
    );
    let s = script(
        DT,
        28,
        2,
        &[
            set(0, 0, json!({"ok": true})),
            set(16, 1, json!({"ok": true})),
            set(24, 1, json!({"fin": true})),
        ],
    );
    let run = simulate("non_looping", &m, &s, &["a=1"]);
    run.settled(14, 0, "n", 0.9375);
    run.settled(15, 0, "b", 0.0);
    assert_eq!(run.log(0), instant_at(15, "n", 0, "b"));

    for f in 15..24 {
        run.settled(f, 1, "n", 1.0);
    }
    run.settled(24, 1, "d", 0.0);
    assert_eq!(run.log(1), instant_at(24, "n", 2, "d"));
}

// ---------------------------------------------------------------------------------------------
// Parameters: conditions, speed parameters, resets.
// ---------------------------------------------------------------------------------------------

/// The conditions (Int >, ==, !=, <; Bool false; Float strict > and <, a value equal to the
/// constant failing both, detail 12), and detail 1: a parameter set for frame f is seen by frame
/// f's conditions. Transitions, all instant: 0 a→b [n > 2]; 1 b→c [n == 5]; 2 c→d [n != 5,
/// flag false]; 3 d→e [n < 0]; 4 e→a [f > 0.5]; 5 e→b [f < 0.5].
#[test]
fn int_bool_and_float_conditions() {
    let m = machine(
        "conditions",
        json!([
            {"name": "n", "kind": "int", "default": 0},
            {"name": "flag", "kind": "bool", "default": true},
            {"name": "f", "kind": "float", "default": 0.5}
        ]),
        json!([
            state("a", "a"),
            state("b", "a"),
            state("c", "a"),
            state("d", "a"),
            state("e", "a")
        ]),
        "a",
        &[
            transition("a", "b", json!({"conditions": [compare("n", "greater", 2.0)]})),
            transition("b", "c", json!({"conditions": [compare("n", "equals", 5.0)]})),
            transition(
                "c",
                "d",
                json!({"conditions": [compare("n", "not_equals", 5.0), when("flag", "false")]}),
            ),
            transition("d", "e", json!({"conditions": [compare("n", "less", 0.0)]})),
            transition("e", "a", json!({"conditions": [compare("f", "greater", 0.5)]})),
            transition("e", "b", json!({"conditions": [compare("f", "less", 0.5)]})),
        ],
    );
    let s = script(
        DT,
        14,
        1,
        &[
            set(1, 0, json!({"n": 2})),
            set(2, 0, json!({"n": 3})),
            set(4, 0, json!({"n": 5})),
            set(6, 0, json!({"n": 4})),
            set(7, 0, json!({"flag": false})),
            set(8, 0, json!({"n": -1})),
            set(12, 0, json!({"f": 0.75})),
        ],
    );
    let run = simulate("conditions", &m, &s, &["a=1"]);
    let mut expected = instant_at(2, "a", 0, "b");
    expected.extend(instant_at(4, "b", 1, "c"));
    expected.extend(instant_at(7, "c", 2, "d"));
    expected.extend(instant_at(8, "d", 3, "e"));
    expected.extend(instant_at(12, "e", 4, "a"));
    assert_eq!(run.log(0), expected);
    run.settled(1, 0, "a", 0.125);
    run.settled(11, 0, "e", 0.1875);
    run.settled(13, 0, "a", 0.0625);
}

/// Detail 2: t' = t + dt · speed · value(speed_parameter) / length, with this frame's value (a
/// value set for frame f moves frame f; a negative one plays backward, 0 stops), and detail 1: the
/// same frame's conditions see it (a→b on rate < 0 fires on frame 8, a reported as the source
/// while its clock keeps following the parameter).
#[test]
fn a_speed_parameter_scales_the_clock_from_the_frame_it_is_set() {
    let m = machine(
        "speed_parameter",
        json!([{"name": "rate", "kind": "float", "default": 1.0}]),
        json!([
            state_with("a", "a", json!({"speed": 2.0, "speed_parameter": "rate"})),
            state("b", "b")
        ]),
        "a",
        &[transition(
            "a",
            "b",
            json!({"conditions": [compare("rate", "less", 0.0)], "duration": 0.25}),
        )],
    );
    let s = script(
        DT,
        13,
        1,
        &[
            set(4, 0, json!({"rate": 0.5})),
            set(8, 0, json!({"rate": -1.0})),
            set(10, 0, json!({"rate": 0.0})),
        ],
    );
    let run = simulate("speed_parameter", &m, &s, &["a=1", "b=1"]);
    for (f, sixteenths) in [2, 4, 6, 8, 9, 10, 11, 12].into_iter().enumerate() {
        run.settled(f, 0, "a", f64::from(sixteenths) / 16.0);
    }
    run.blending(8, 0, "a", 0.625, 0, "b", 0.0, 0.0);
    run.blending(9, 0, "a", 0.5, 0, "b", 0.25, 0.0625);
    run.blending(10, 0, "a", 0.5, 0, "b", 0.5, 0.125);
    run.blending(11, 0, "a", 0.5, 0, "b", 0.75, 0.1875);
    run.settled(12, 0, "b", 0.25);
    assert_eq!(
        run.log(0),
        log(&[(8, &["exited a", "started 0"]), (12, &["entered b", "ended 0"])])
    );
}

/// Detail 1: a reset character is in the entry state at t = 0, no transition, no events, and its
/// first frame advances normally. Character 0 resets in the middle of a→b (frame 5): a at 1/16 on
/// frame 5, a→b never ends, and `go` is back to its default; character 1 runs a→b to its end.
#[test]
fn a_reset_character_starts_over_in_the_entry_state() {
    let m = machine(
        "reset",
        json!([{"name": "go", "kind": "bool"}]),
        json!([state("a", "a"), state("b", "b")]),
        "a",
        &[transition(
            "a",
            "b",
            json!({"conditions": [when("go", "true")], "duration": 0.25}),
        )],
    );
    let s = script(
        DT,
        10,
        2,
        &[
            set(2, 0, json!({"go": true})),
            json!({"frame": 5, "character": 0, "reset": true}),
            set(2, 1, json!({"go": true})),
        ],
    );
    let run = simulate("reset", &m, &s, &["a=1", "b=1"]);
    run.blending(4, 0, "a", 0.3125, 0, "b", 0.5, 0.125);
    run.settled(5, 0, "a", 0.0625);
    run.settled(9, 0, "a", 0.3125);
    assert_eq!(run.log(0), log(&[(2, &["exited a", "started 0"])]));

    run.blending(4, 1, "a", 0.3125, 0, "b", 0.5, 0.125);
    run.settled(6, 1, "b", 0.25);
    assert_eq!(
        run.log(1),
        log(&[(2, &["exited a", "started 0"]), (6, &["entered b", "ended 0"])])
    );
}

// ---------------------------------------------------------------------------------------------
// Refusals, through the library.
// ---------------------------------------------------------------------------------------------

/// A library builder with the mannequin and its clips (idle, walk, run, walk_backward,
/// strafe_left, strafe_right).
fn mannequin_builder() -> (LibraryBuilder, wgpu_anim::SkeletonId) {
    let skeleton = wgpu_anim::mannequin::skeleton();
    let clips = wgpu_anim::mannequin::clips(&skeleton);
    let mut builder = LibraryBuilder::new();
    let s = builder.add_skeleton(skeleton);
    for clip in &clips {
        builder.add_clip(s, clip).unwrap();
    }
    (builder, s)
}

/// A machine on the mannequin's clips whose transition 1 is `bad` (transition 0 is valid).
fn with_bad_transition(name: &str, bad: Transition) -> StateMachine {
    StateMachine {
        name: name.into(),
        parameters: vec![
            Parameter::float("speed", 0.0),
            Parameter::int("count", 0),
            Parameter::bool("flag", false),
            Parameter::trigger("wave"),
        ],
        states: vec![
            State::new("idle", Motion::clip("idle")),
            State::new("walk", Motion::clip("walk")),
        ],
        entry: "idle".into(),
        transitions: vec![Transition::new("walk", "idle").when(Condition::less("speed", 0.1)), bad],
    }
}

/// The reference's refusals ("Data" and detail 12): each refused by `add_state_machine` with an
/// `Error::Machine` naming the machine and the transition (its index and states); nothing is
/// added, and a valid machine still adds after them.
#[test]
fn every_refusal_names_the_machine_and_the_transition_and_adds_nothing() {
    let base = || Transition::new("idle", "walk").when(Condition::greater("speed", 0.5));
    let cases: Vec<(&str, Transition, &str, &str)> = vec![
        ("no_condition_no_exit", Transition::new("idle", "walk"), "idle", "walk"),
        (
            "unknown_from",
            Transition::new("nowhere", "walk").when(Condition::is_true("flag")),
            "nowhere",
            "walk",
        ),
        (
            "unknown_to",
            Transition::new("idle", "nowhere").when(Condition::is_true("flag")),
            "idle",
            "nowhere",
        ),
        (
            "unknown_to_from_any",
            Transition::any("nowhere").when(Condition::is_true("flag")),
            "Any",
            "nowhere",
        ),
        (
            "unknown_parameter",
            Transition::new("idle", "walk").when(Condition::greater("nope", 0.5)),
            "idle",
            "walk",
        ),
        (
            "float_tested_as_trigger",
            Transition::new("idle", "walk").when(Condition::trigger("speed")),
            "idle",
            "walk",
        ),
        (
            "bool_compared",
            Transition::new("idle", "walk").when(Condition::greater("flag", 0.5)),
            "idle",
            "walk",
        ),
        (
            "int_tested_as_bool",
            Transition::new("idle", "walk").when(Condition::is_true("count")),
            "idle",
            "walk",
        ),
        (
            "trigger_tested_as_bool",
            Transition::new("idle", "walk").when(Condition::is_false("wave")),
            "idle",
            "walk",
        ),
        (
            "float_equals",
            Transition::new("idle", "walk").when(Condition::equals("speed", 1)),
            "idle",
            "walk",
        ),
        (
            "constant_nan",
            Transition::new("idle", "walk").when(Condition::greater("speed", f64::NAN)),
            "idle",
            "walk",
        ),
        (
            "constant_infinite",
            Transition::new("idle", "walk").when(Condition::less("speed", f64::INFINITY)),
            "idle",
            "walk",
        ),
        (
            "int_constant_infinite",
            Transition::new("idle", "walk").when(Condition::greater("count", f64::NEG_INFINITY)),
            "idle",
            "walk",
        ),
        ("duration_nan", base().duration(f32::NAN), "idle", "walk"),
        ("duration_infinite", base().duration(f32::INFINITY), "idle", "walk"),
        (
            "normalized_duration_nan",
            base().normalized_duration(f32::NAN),
            "idle",
            "walk",
        ),
        ("offset_nan", base().offset(f32::NAN), "idle", "walk"),
        ("exit_time_nan", base().exit_time(f32::NAN), "idle", "walk"),
        ("exit_time_infinite", base().exit_time(f32::INFINITY), "idle", "walk"),
        (
            "exit_time_only_nan",
            Transition::new("idle", "walk").exit_time(f32::NAN),
            "idle",
            "walk",
        ),
        ("duration_negative", base().duration(-0.25), "idle", "walk"),
        (
            "normalized_duration_negative",
            base().normalized_duration(-0.5),
            "idle",
            "walk",
        ),
        ("offset_negative", base().offset(-0.25), "idle", "walk"),
        ("offset_above_one", base().offset(1.5), "idle", "walk"),
        (
            "int_constant_fraction",
            Transition::new("idle", "walk").when(Condition::greater("count", 1.5)),
            "idle",
            "walk",
        ),
        (
            "int_equals_fraction",
            Transition::new("idle", "walk").when(Condition {
                parameter: "count".into(),
                test: wgpu_anim::machine::Test::Equals,
                value: 2.5,
            }),
            "idle",
            "walk",
        ),
    ];
    let (mut builder, skeleton) = mannequin_builder();
    for (name, bad, from, to) in &cases {
        let machine = with_bad_transition(name, bad.clone());
        match builder.add_state_machine(skeleton, &machine) {
            Err(e @ Error::Machine { .. }) => {
                let message = e.to_string();
                let Error::Machine { machine: named, at, .. } = &e else {
                    unreachable!()
                };
                assert_eq!(named, name, "{name}: {message}");
                assert!(message.contains(name), "{name}: {message}");
                assert!(at.contains("transition 1"), "{name}: {message}");
                assert!(at.contains(from) && at.contains(to), "{name}: {message}");
            }
            Err(e) => panic!("{name}: refused with another error: {e}"),
            Ok(_) => panic!("{name}: not refused"),
        }
    }
    // The boundaries are accepted: offsets 0 and 1, duration 0, an integral Int constant.
    let fine = with_bad_transition(
        "valid",
        Transition::new("idle", "walk")
            .when(Condition::greater("count", 2.0))
            .when(Condition::greater("speed", 0.5))
            .duration(0.0)
            .offset(1.0),
    );
    let id = builder
        .add_state_machine(skeleton, &fine)
        .expect("a valid machine still adds");
    let library = builder.build();
    let machines = library.machines();
    assert_eq!(machines.names, vec!["valid".to_string()]);
    assert_eq!(machines.states(id).unwrap().len(), 2);
    assert_eq!(machines.transitions(id).unwrap().len(), 2);
    assert_eq!(machines.state_names.len(), 2, "refused machines left states behind");
    assert_eq!(
        machines.transitions.len(),
        2,
        "refused machines left transitions behind"
    );
}

/// A refusal of the first machine of a library leaves none behind (`names` empty) and the library
/// still builds.
#[test]
fn a_refused_machine_is_not_added() {
    let (mut builder, skeleton) = mannequin_builder();
    let machine = with_bad_transition("refused", Transition::new("idle", "walk"));
    assert!(matches!(
        builder.add_state_machine(skeleton, &machine),
        Err(Error::Machine { .. })
    ));
    let library = builder.build();
    assert!(library.machines().names.is_empty());
    assert!(library.machines().id("refused").is_none());
}
