//! Progress of a bench run with an estimate of the time left ([`Plan`]).
//!
//! Every step of a run (a row, a paired comparison) is weighed before the run starts: its
//! characters × frames × how much a character-frame of that kind costs against an animation
//! frame's ([`Kind::factor`]). The time left is the time so far over the weight done, times the
//! weight left: rough on the first steps, closer as the run goes.

use std::time::Instant;

/// What a step measures, for its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A GPU row: measured, edited and read-back frames, and the encode frames.
    GpuRow,
    /// A CPU row.
    CpuRow,
    /// Two crowds (or paths) in alternate frames, animation only.
    Paired,
    /// Three crowds in turn, warmed up for a whole transition period.
    Transitions,
    /// Five crowd-view crowds, at most 10 frames.
    Culling,
    /// Two crowds animated and drawn in alternate frames.
    Drawn,
}

impl Kind {
    /// Animation character-frames one character-frame of the step costs, roughly (a drawn
    /// character on a software adapter costs about what 90 animated ones do).
    fn factor(self) -> f64 {
        match self {
            Kind::GpuRow => 4.0,
            Kind::CpuRow => 1.0,
            Kind::Paired => 2.0,
            Kind::Transitions => 3.0,
            Kind::Culling => 4.5,
            Kind::Drawn => 2.0 * 90.0,
        }
    }
}

/// The weight of a step of `kind` with `characters` over `frames` frames.
pub(super) fn weight(kind: Kind, characters: u32, frames: u32) -> f64 {
    f64::from(characters) * f64::from(frames.max(1)) * kind.factor()
}

/// A run's steps, weighed up front, and how far it is.
pub(super) struct Plan {
    total: f64,
    done: f64,
    current: f64,
    steps: u32,
    start: Instant,
}

impl Plan {
    /// A plan of steps weighing `total` in all.
    pub(super) fn new(total: f64) -> Self {
        Self {
            total: total.max(1.0),
            done: 0.0,
            current: 0.0,
            steps: 0,
            start: Instant::now(),
        }
    }

    /// Announces a step of `weight` through `progress`: what it is, how far the run is, the
    /// time so far and (after the first step) an estimate of the time left.
    pub(super) fn step(&mut self, progress: &mut dyn FnMut(&str), what: &str, weight: f64) {
        self.done += self.current;
        self.current = weight;
        self.steps += 1;
        let elapsed = self.start.elapsed().as_secs_f64();
        let share = (self.done / self.total).min(1.0);
        let left = if self.done > 0.0 {
            format!(
                ", about {} left",
                clock(elapsed / self.done * (self.total - self.done).max(0.0))
            )
        } else {
            String::new()
        };
        progress(&format!(
            "[{:>3.0} %, {} so far{left}] {what}",
            share * 100.0,
            clock(elapsed)
        ));
    }
}

/// A run's [`Plan`] and where its lines go.
pub(super) struct Progress<'a> {
    plan: Plan,
    out: &'a mut dyn FnMut(&str),
}

impl<'a> Progress<'a> {
    /// Progress through steps weighing `total`, each line to `out`.
    pub(super) fn new(total: f64, out: &'a mut dyn FnMut(&str)) -> Self {
        Self {
            plan: Plan::new(total),
            out,
        }
    }

    /// Announces a step ([`Plan::step`]).
    pub(super) fn step(&mut self, what: &str, weight: f64) {
        self.plan.step(self.out, what, weight);
    }

    /// A line that is not a step (a configuration skipped).
    pub(super) fn note(&mut self, line: &str) {
        (self.out)(line);
    }
}

/// `m:ss` for `seconds`.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_weights() {
        assert_eq!(clock(0.0), "0:00");
        assert_eq!(clock(61.4), "1:01");
        assert_eq!(clock(3600.0), "60:00");
        assert!(weight(Kind::Drawn, 1000, 5) > weight(Kind::GpuRow, 1000, 5));
        assert_eq!(weight(Kind::CpuRow, 10, 0), 10.0);
    }

    #[test]
    fn steps_say_how_far_and_how_long() {
        let mut plan = Plan::new(4.0);
        let mut lines = Vec::new();
        for _ in 0..4 {
            plan.step(&mut |l| lines.push(l.to_string()), "a step", 1.0);
        }
        assert!(lines[0].starts_with("[  0 %, 0:00 so far] a step"), "{}", lines[0]);
        assert!(lines[3].starts_with("[ 75 %, "), "{}", lines[3]);
        assert!(lines[3].contains("left] a step"), "{}", lines[3]);
    }
}
