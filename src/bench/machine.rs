//! The `state-machine` workload ([`Workload::StateMachine`]): every mannequin follows a
//! locomotion state machine ([`locomotion_machine`]: 6 states, 12 transitions of 2 or 3
//! conditions each) decided on the GPU in the clock pass, its parameters changed on a tenth of
//! the crowd every frame ([`change_parameters`]).
//!
//! Its baseline is [`Workload::SingleClip`]: character `i` of both crowds plays clip
//! `i % 6` of [`mannequin::CLIP_NAMES`] (the machine's parameters are set so that its state
//! plays that clip, and each frame's changes keep it there), so the two crowds sample the same
//! clips and what the state-machine crowd adds is the machine's: its rules in the clock pass
//! (64 bytes of machine state and 64 of parameter slots read, the state written back, the
//! library's machine read) and the parameter slots uploaded. The cross-fades a machine fires when
//! a state changes are left out: they cost what any transition costs (the transitions table),
//! machine or not. The goal: the whole animation frame at most 10 % more than `single-clip`'s.

use super::*;
use crate::layout::{GpuMachineState, MACHINE, MACHINE_NONE};
use crate::machine::{Condition, MachineId, Motion, Parameter, State, StateMachine, Transition, Value};

/// The share of the crowd whose parameters change every frame.
pub const CHANGED_SHARE: f64 = 0.1;

/// Frames the crowd plays when made, without changes: each character's transition out of the
/// entry state (`idle`, 0.2 s) runs its course, so that the frames measured play the states the
/// parameters decide, not the cross-fades into them.
pub const SETTLE_FRAMES: u32 = 16;

/// The machine's name in the bench's library.
pub const MACHINE_NAME: &str = "bench_locomotion";

/// The bench's locomotion machine on the mannequin's clips ([`mannequin::CLIP_NAMES`]): states
/// `idle`, `walk`, `run`, `strafe_left`, `strafe_right` and `walk_backward`, each playing its
/// clip; parameters `speed` (float, m/s), `direction` (float, degrees in [-135, 225): 0 ahead,
/// 90 to the right, 180 behind), `moving` (bool) and `gait` (int: 0 walk, 1 run); 12
/// transitions (linear cross-fades of 0.2 s), each of 2 or 3 conditions:
///
/// - `Any` → `walk_backward`: moving, direction > 135;
/// - `idle` → `run`: moving, gait = 1, speed > 2;
/// - `idle` → `walk`: moving, -45 < direction < 45;
/// - `idle` → `strafe_left`: moving, direction < -45;
/// - `idle` → `strafe_right`: moving, 45 < direction < 135;
/// - `walk` → `run`: gait = 1, speed > 2;
/// - `run` → `walk`: gait = 0, moving;
/// - each of the five moving states → `idle`: not moving, speed < 0.5.
#[must_use]
pub fn locomotion_machine() -> StateMachine {
    let moving = || Condition::is_true("moving");
    let mut transitions = vec![
        Transition::any("walk_backward")
            .when(moving())
            .when(Condition::greater("direction", 135.0)),
        Transition::new("idle", "run")
            .when(moving())
            .when(Condition::equals("gait", 1))
            .when(Condition::greater("speed", 2.0)),
        Transition::new("idle", "walk")
            .when(moving())
            .when(Condition::greater("direction", -45.0))
            .when(Condition::less("direction", 45.0)),
        Transition::new("idle", "strafe_left")
            .when(moving())
            .when(Condition::less("direction", -45.0)),
        Transition::new("idle", "strafe_right")
            .when(moving())
            .when(Condition::greater("direction", 45.0))
            .when(Condition::less("direction", 135.0)),
        Transition::new("walk", "run")
            .when(Condition::equals("gait", 1))
            .when(Condition::greater("speed", 2.0)),
        Transition::new("run", "walk")
            .when(Condition::equals("gait", 0))
            .when(moving()),
    ];
    for from in ["walk", "run", "strafe_left", "strafe_right", "walk_backward"] {
        transitions.push(
            Transition::new(from, "idle")
                .when(Condition::is_false("moving"))
                .when(Condition::less("speed", 0.5)),
        );
    }
    StateMachine {
        name: MACHINE_NAME.into(),
        parameters: vec![
            Parameter::float("speed", 0.0),
            Parameter::float("direction", 0.0),
            Parameter::bool("moving", false),
            Parameter::int("gait", 0),
        ],
        states: mannequin::CLIP_NAMES
            .iter()
            .map(|&name| State::new(name, Motion::clip(name)))
            .collect(),
        entry: "idle".into(),
        transitions,
    }
}

/// The mannequin's library ([`mannequin::library_in`]) with [`locomotion_machine`]: the library,
/// the machine and the clips in [`mannequin::CLIP_NAMES`] order.
///
/// Errors: the machine is refused (it is not: a test adds it).
pub(crate) fn library_in(format: ClipFormat) -> Result<(AnimationLibrary, MachineId, Vec<crate::ClipId>)> {
    let (mut builder, skeleton, clips) = mannequin::builder_in(format);
    let id = builder.add_state_machine(skeleton, &locomotion_machine())?;
    Ok((builder.build(), id, clips))
}

/// Where the parameters of a character playing clip `k` of [`mannequin::CLIP_NAMES`] stay:
/// `speed` and `direction` at the centre of their band (each frame's changes move them within
/// `±SPREAD` of it), `moving` and `gait`.
struct Home {
    speed: f32,
    direction: f32,
    moving: bool,
    gait: i32,
}

/// How far a change moves `speed` and `direction` from their [`Home`]: the state holds.
const SPEED_SPREAD: f32 = 0.2;
const DIRECTION_SPREAD: f32 = 30.0;

fn home(k: usize) -> Home {
    let (speed, direction, moving, gait) = match mannequin::CLIP_NAMES[k % mannequin::CLIP_NAMES.len()] {
        "idle" => (0.2, 0.0, false, 0),
        "walk" => (1.4, 0.0, true, 0),
        "run" => (3.5, 0.0, true, 1),
        "walk_backward" => (1.2, 180.0, true, 0),
        "strafe_left" => (1.2, -90.0, true, 0),
        _ => (1.2, 90.0, true, 0),
    };
    Home {
        speed,
        direction,
        moving,
        gait,
    }
}

/// Makes instance `index` of `controller` follow `machine` with the parameters of clip `k`'s
/// state ([`home`]).
pub(crate) fn follow(
    controller: &mut crate::gpu::Controller,
    index: usize,
    machine: MachineId,
    k: usize,
) -> Result<()> {
    let h = home(k);
    controller.set_machine(index, Some(machine))?;
    controller.set_parameter(index, "speed", Value::Float(h.speed))?;
    controller.set_parameter(index, "direction", Value::Float(h.direction))?;
    controller.set_parameter(index, "moving", Value::Bool(h.moving))?;
    controller.set_parameter(index, "gait", Value::Int(h.gait))
}

/// The workload's changes before a frame of `a`, when its characters follow a machine (the
/// first one tells; nothing otherwise): a tenth of the crowd ([`CHANGED_SHARE`]: every tenth
/// character from a random one of the first ten) gets a new `speed` and `direction` within its
/// state's band, through [`crate::gpu::Controller::set_parameter`]. Random but the same for a
/// frame number ([`Animator::frame`]) whatever the run.
///
/// Errors: the controller refuses a parameter (it does not: the names are the machine's).
pub fn change_parameters(a: &mut Animator) -> Result<()> {
    let c = a.controller();
    if c.machine(0).is_none() {
        return Ok(());
    }
    let n = c.instance_count();
    let stride = (1.0 / CHANGED_SHARE).round() as usize;
    let mut rng = crate::scene::SplitMix(0x5747_e000 ^ a.frame().wrapping_mul(0x9E37_79B9));
    let first = (rng.next() % stride as u64) as usize;
    let unit = |rng: &mut crate::scene::SplitMix| (rng.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
    let controller = a.controller_mut();
    for i in (first..n).step_by(stride) {
        let h = home(i);
        let speed = (h.speed + SPEED_SPREAD * unit(&mut rng)).max(0.0);
        let direction = h.direction + DIRECTION_SPREAD * unit(&mut rng);
        controller.set_parameter(i, "speed", Value::Float(speed))?;
        controller.set_parameter(i, "direction", Value::Float(direction))?;
    }
    Ok(())
}

/// Bytes a frame of a character with a machine adds to its per-character traffic: the clock
/// reads its machine state (64 B) and its parameter slots (64 B) and writes the state back.
pub(crate) const MACHINE_OWN_BYTES: u64 = 3 * size_of::<GpuMachineState>() as u64;

/// The library bytes the clock reads of `state`'s machine in a frame (shared by the characters
/// of that machine): the header, the state's definition (and the destination's while a
/// transition runs), and each candidate transition (the `Any` ones, then the state's) with its
/// index and every condition (an upper bound: the rules stop at a condition that fails).
pub(crate) fn machine_shared_bytes(lib: &AnimationLibrary, state: &GpuMachineState) -> u64 {
    use crate::layout::{GpuMachine, GpuMachineCondition, GpuMachineStateDef, GpuMachineTransition};
    let machines = lib.machines();
    let Some(m) = machines.machines.get(state.machine as usize) else {
        return 0;
    };
    let def = |s: u32| {
        machines
            .states
            .get((m.state_offset + s.min(m.state_count.max(1) - 1)) as usize)
    };
    let Some(own) = def(state.current) else {
        return 0;
    };
    let mut bytes = (size_of::<GpuMachine>() + size_of::<GpuMachineStateDef>()) as u64;
    if state.transition != MACHINE_NONE {
        bytes += size_of::<GpuMachineStateDef>() as u64;
    }
    let candidates = (m.any_offset..m.any_offset + m.any_count)
        .chain(own.candidate_offset..own.candidate_offset + own.candidate_count);
    for c in candidates {
        let Some(t) = machines
            .candidates
            .get(c as usize)
            .and_then(|&k| machines.transitions.get((m.transition_offset + k) as usize))
        else {
            continue;
        };
        bytes += 4
            + size_of::<GpuMachineTransition>() as u64
            + u64::from(t.condition_count) * size_of::<GpuMachineCondition>() as u64;
    }
    bytes
}

/// Whether instance `inst` follows a machine.
pub(crate) fn follows_machine(inst: &GpuInstance) -> bool {
    inst.flags & MACHINE != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_has_six_states_and_twelve_transitions_of_two_or_three_conditions() {
        let m = locomotion_machine();
        assert_eq!(m.states.len(), 6);
        assert_eq!(m.transitions.len(), 12);
        assert!(m.transitions.iter().all(|t| (2..=3).contains(&t.conditions.len())));
        let (lib, id, clips) = library_in(ClipFormat::Raw).expect("the library takes the machine");
        assert_eq!(clips.len(), mannequin::CLIP_NAMES.len());
        assert_eq!(lib.machines().states(id).unwrap().len(), 6);
        assert_eq!(lib.machines().transitions(id).unwrap().len(), 12);
    }

    /// Each home's parameters, moved anywhere within their spread, fire no transition out of
    /// the state that plays clip `k`, and take the entry state to it in one transition.
    #[test]
    fn a_home_holds_its_state_and_is_one_transition_from_idle() {
        let m = locomotion_machine();
        let holds = |c: &Condition, speed: f32, direction: f32, h: &Home| match c.parameter.as_str() {
            "speed" => {
                c.test == crate::machine::Test::Greater && f64::from(speed) > c.value
                    || c.test == crate::machine::Test::Less && f64::from(speed) < c.value
            }
            "direction" => {
                c.test == crate::machine::Test::Greater && f64::from(direction) > c.value
                    || c.test == crate::machine::Test::Less && f64::from(direction) < c.value
            }
            "moving" => (c.test == crate::machine::Test::True) == h.moving,
            _ => f64::from(h.gait) == c.value,
        };
        let fires = |t: &Transition, speed: f32, direction: f32, h: &Home| {
            t.conditions.iter().all(|c| holds(c, speed, direction, h))
        };
        for (k, &name) in mannequin::CLIP_NAMES.iter().enumerate() {
            let h = home(k);
            for (ds, dd) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0), (0.0, 0.0)] {
                let (speed, direction) = (
                    (h.speed + ds * SPEED_SPREAD).max(0.0),
                    h.direction + dd * DIRECTION_SPREAD,
                );
                let leaving = m.transitions.iter().find(|t| {
                    let from_here = match &t.from {
                        crate::machine::Source::Any => t.to != name,
                        crate::machine::Source::State(s) => s == name,
                    };
                    from_here && fires(t, speed, direction, &h)
                });
                assert!(leaving.is_none(), "{name} at {speed} m/s, {direction}°: {leaving:?}");
                // From idle, the first transition that fires goes to the home's state.
                let first = m
                    .transitions
                    .iter()
                    .filter(|t| {
                        matches!(&t.from, crate::machine::Source::Any)
                            || matches!(&t.from, crate::machine::Source::State(s) if s == "idle")
                    })
                    .find(|t| fires(t, speed, direction, &h));
                assert_eq!(
                    first.map_or("idle", |t| t.to.as_str()),
                    name,
                    "{speed} m/s, {direction}°"
                );
            }
        }
    }
}
