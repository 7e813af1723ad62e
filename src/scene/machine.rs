//! A crowd whose members follow a state machine ([`Character::machine`]): the mannequin with a
//! machine and the one-shot clip it waves with, the machine's parameters set from where the
//! wander logic steers each member, triggers on a random share of the crowd, and how many
//! members each state holds, read back without waiting.

use super::character::Character;
use super::wander::Role;
use super::{Crowd, SplitMix};
use crate::clip::{Clip, Track};
use crate::error::Result;
use crate::gpu::FrameReadback;
use crate::machine::{MachineId, StateMachine};
use glam::Quat;

/// The one-shot clip of [`Character::mannequin_with_machine`]: the idle, the right arm raised in
/// its first 0.4 s, waving (as the wave layer does), and lowered in its last half second; 3 s,
/// not looping, so that it ends as the idle does.
pub const WAVE_ONCE: &str = "wave_once";

impl Character {
    /// The built-in mannequin ([`Character::mannequin_in`]) whose wandering members follow state
    /// machine `machine` ([`Character::machine`]): its library holds the crowd's clips, its
    /// locomotion tree and layer assets, the one-shot [`WAVE_ONCE`] clip, and `machine`, which
    /// may play any of them. A crowd of it sets the machine's float parameters
    /// [`MACHINE_SPEED`](super::MACHINE_SPEED) and [`MACHINE_DIRECTION`](super::MACHINE_DIRECTION)
    /// (when it has them) as it steers each member, and [`Crowd::trigger`] sets its triggers.
    ///
    /// Errors: a machine the library refuses ([`crate::LibraryBuilder::add_state_machine`]).
    pub fn mannequin_with_machine(
        format: crate::offline::compress::ClipFormat,
        machine: &StateMachine,
    ) -> Result<Self> {
        Self::mannequin_with(format, |builder, skeleton| {
            let once = wave_once(builder.skeleton(skeleton)?);
            builder.add_clip(skeleton, &once)?;
            builder.add_state_machine(skeleton, machine).map(Some)
        })
    }
}

/// [`WAVE_ONCE`] for the mannequin's `skeleton`: its idle (breathing as the crowd's does) with
/// the right arm's rotations eased to the wave layer's and back.
fn wave_once(skeleton: &crate::Skeleton) -> Clip {
    let mut idle = crate::mannequin::clips(skeleton).swap_remove(0);
    crate::mannequin::add_breathing(std::slice::from_mut(&mut idle));
    let end = idle.duration;
    // The wave layer's arm: raised to the side, the forearm sweeping twice in 1.2 s.
    let raise = |_: f32| Quat::from_rotation_z(-1.95) * Quat::from_rotation_y(0.3);
    let sweep = |t: f32| Quat::from_rotation_z(-0.5 + 0.45 * (std::f32::consts::TAU * 2.0 * t / 1.2).sin());
    let smooth = |e0: f32, e1: f32, x: f32| super::smoothstep(e0, e1, x);
    let amount = |t: f32| smooth(0.0, 0.4, t) * (1.0 - smooth(end - 0.5, end, t));
    let keys = (end * crate::mannequin::KEYS_PER_SECOND).round() as usize;
    let times: Vec<f32> = (0..=keys).map(|k| end * k as f32 / keys as f32).collect();
    let arm: [(&str, &dyn Fn(f32) -> Quat); 2] = [("upperarm_r", &raise), ("lowerarm_r", &sweep)];
    for (joint, wave) in arm {
        let own = idle.tracks.iter().position(|t| t.joint == joint);
        // The idle's rotation at each key time (keyed 30 times a second, or the rest pose).
        let base = |t: f32| -> Quat {
            own.and_then(|k| idle.tracks[k].rotation.as_ref())
                .map_or(Quat::IDENTITY, |track| sample(track, t))
        };
        let rotation = Track::linear(times.iter().map(|&t| (t, base(t).slerp(wave(t), amount(t)))));
        match own {
            Some(k) => idle.tracks[k].rotation = Some(rotation),
            None => idle.tracks.push(crate::clip::JointTrack {
                joint: joint.into(),
                rotation: Some(rotation),
                ..Default::default()
            }),
        }
    }
    idle.name = WAVE_ONCE.into();
    idle.looping = false;
    idle
}

/// A linear (or stepped) rotation track at time `t`, clamped to its keys.
fn sample(track: &Track<Quat>, t: f32) -> Quat {
    let k = track.times.partition_point(|&k| k <= t);
    match k {
        0 => track.values[0],
        k if k >= track.times.len() => track.values[track.times.len() - 1],
        k => {
            let (t0, t1) = (track.times[k - 1], track.times[k]);
            let u = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
            track.values[k - 1].slerp(track.values[k], u)
        }
    }
}

/// How many members each state of a crowd's machine held in a frame read back
/// ([`Crowd::machine_counts`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineCounts {
    /// The frame they were read back from.
    pub frame: u64,
    /// Each state's name and how many members play it (a member in a transition counts in its
    /// source state), in the machine's order.
    pub states: Vec<(String, usize)>,
    /// Members in a transition.
    pub transitions: usize,
}

impl std::fmt::Display for MachineCounts {
    /// `idle 31, walk 120, run 52, … (7 in a transition)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let states: Vec<String> = self.states.iter().map(|(name, n)| format!("{name} {n}")).collect();
        write!(f, "{} ({} in a transition)", states.join(", "), self.transitions)
    }
}

impl Crowd {
    /// Sets trigger `name` of the machine of a random `fraction` of the members that follow one
    /// ([`Character::machine`]; at least one when any does), leaving out those whose arm aims:
    /// returns how many. Errors for a trigger the machine lacks (nothing set).
    ///
    /// Errors: [`crate::Error::Machine`] naming the parameter.
    pub fn trigger(&mut self, name: &str, fraction: f32) -> Result<usize> {
        let Some(id) = self.character.machine else {
            return Ok(0);
        };
        self.character.library.machines().parameter(id, name)?;
        let controller = self.animator.controller();
        let mut free: Vec<usize> = (self.agents.iter().enumerate())
            .filter(|(i, a)| controller.machine(*i) == Some(id) && a.wander.is_some_and(|w| w.role != Role::Aiming))
            .map(|(i, _)| i)
            .collect();
        let n = ((free.len() as f32 * fraction).round() as usize).clamp(usize::from(!free.is_empty()), free.len());
        pick(&mut self.rng, &mut free, n);
        for &i in &free[..n] {
            self.animator.controller_mut().set_trigger(i, name)?;
        }
        Ok(n)
    }

    /// How many members each state of the machine held in the last frame read back (without
    /// waiting: a frame or more late), when the character has a machine and a frame came back.
    #[must_use]
    pub fn machine_counts(&self) -> Option<&MachineCounts> {
        self.machine_counts.as_ref()
    }

    /// Keeps the counts of the last of `got` that read the machines back.
    pub(super) fn count_states(&mut self, got: &[FrameReadback]) {
        let Some(id) = self.character.machine else { return };
        let Some(r) = got.iter().rev().find(|r| !r.machines.is_empty()) else {
            return;
        };
        self.machine_counts = Some(counts(&self.character, id, r, self.agents.len()));
    }

    /// The crowd, reading every member's machine back with each frame when the character has
    /// one.
    pub(super) fn watching_machines(mut self, device: &wgpu::Device) -> Result<Self> {
        if self.character.machine.is_some() {
            let all: Vec<usize> = (0..self.agents.len()).collect();
            self.animator.watch_machines(device, &all)?;
        }
        Ok(self)
    }
}

/// The counts of readback `r`'s first `members` machines (those of machine `id`).
fn counts(c: &Character, id: MachineId, r: &FrameReadback, members: usize) -> MachineCounts {
    let names = c.library.machines().state_names(id).unwrap_or_default();
    let mut n = MachineCounts {
        frame: r.frame,
        states: names.iter().map(|s| (s.clone(), 0)).collect(),
        transitions: 0,
    };
    for m in r.machines.iter().take(members).filter(|m| m.machine == id.index()) {
        if let Some(s) = m.playing().and_then(|s| n.states.get_mut(s as usize)) {
            s.1 += 1;
        }
        n.transitions += usize::from(m.running().is_some());
    }
    n
}

/// Moves `n` members of `list` picked at random to its front.
fn pick(r: &mut SplitMix, list: &mut [usize], n: usize) {
    for k in 0..n.min(list.len()) {
        let j = k + ((r.unit() * (list.len() - k) as f32) as usize).min(list.len() - k - 1);
        list.swap(k, j);
    }
}
