//! Transitions on the GPU, drawn as a curve: a mannequin walks, and at 0.5 s goes to its run (from
//! 0.2 s into it) by a cut, a cross-fade, an inertialization (Bollo's offset decay) and dead
//! blending, each on an instance of its own; the chart follows the left hip through each, beside
//! the walk and the run played alone. The cut jumps; the cross-fade evaluates both clips and
//! follows their mix, its speed changing at once; the inertialized transitions evaluate the run
//! alone and carry the walk's pose and velocity into it, the offset never passing the run's
//! curve. Uses `Animator` and `bench::plot::draw_curves`.
//!
//! ```text
//! cargo run --release --example transitions -- [--duration SECONDS] [--out PATH]
//! ```

use clap::Parser;
use std::path::PathBuf;
use wgpu_anim::bench::plot::{Curve, draw_curves};
use wgpu_anim::gpu::{Transition, headless_device};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, mannequin};

/// Charts one joint through a cut, a cross-fade, an inertialization and dead blending.
#[derive(Parser)]
#[command(name = "transitions")]
struct Args {
    /// Length of the transitions, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.4)]
    duration: f32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "transitions.png")]
    out: PathBuf,
}

/// Frames a second, frames shown, and the frame whose `play` starts the transitions.
const RATE: f32 = 60.0;
const FRAMES: usize = 66;
const SWITCH: usize = 30;
/// Where the run starts, seconds: its hip swinging back as the walk's is at the switch, from
/// further forward.
const RUN_FROM: f32 = 0.2;

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if !(args.duration.is_finite() && args.duration > 0.0) {
        return Err(format!("--duration {} is not a positive time", args.duration).into());
    }
    let (device, queue) = headless_device()?;
    let (library, _, clips) = mannequin::library();
    let knee = mannequin::skeleton().joint_index("thigh_l").ok_or("the mannequin has no left thigh")?;
    let desc = AnimatorDesc::default().with_max_instances(6).with_inertialization(true);
    let mut animator = Animator::new(&device, &library, &desc)?;
    let (walk, run) = (clips[1], clips[2]);
    // The walk alone, then one instance per transition, then the run alone from the switch.
    let transitions = [
        ("cut", None),
        ("cross-fade", Some(Transition::linear(args.duration))),
        ("inertialization", Some(Transition::inertialize(args.duration))),
        ("dead blending", Some(Transition::dead_blend(args.duration))),
    ];
    for _ in 0..5 {
        animator.controller_mut().add_instance(&InstanceDesc::new(walk))?;
    }
    let run_from = InstanceDesc::new(run).with_time(RUN_FROM);
    let run_alone = animator.controller_mut().add_instance(&run_from)?;
    let mut angles = vec![Vec::new(); 6];
    for frame in 0..FRAMES {
        if frame == SWITCH {
            for (k, (_, t)) in transitions.iter().enumerate() {
                animator.controller_mut().play(k + 1, &run_from, *t)?;
            }
        }
        if frame == SWITCH + 1 {
            // Inertialized transitions start a frame after their call (that frame keeps the
            // walk's velocity); the run alone starts with them.
            animator.controller_mut().set_time(run_alone, RUN_FROM)?;
        }
        animator.prepare(&queue, if frame == 0 { 0.0 } else { 1.0 / RATE });
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
        let local = animator.read_local_region(&device, &queue, 0)?;
        let seconds = f64::from(frame as f32 / RATE);
        for (k, a) in angles.iter_mut().enumerate() {
            let instance = animator.controller().instance(k).ok_or("no such instance")?;
            let q = local[instance.joint_offset as usize + knee].rotation;
            // The hip swings the thigh about its x axis: the signed angle of that rotation, degrees.
            let angle = 2.0 * q.x.atan2(q.w).to_degrees();
            if k != run_alone || frame > SWITCH {
                a.push((seconds, f64::from(angle)));
            }
        }
    }
    let colours = [[160, 160, 160], [214, 96, 77], [244, 165, 70], [33, 113, 181], [26, 152, 80], [90, 90, 90]];
    let names = ["walk alone", "cut", "cross-fade", "inertialization", "dead blending", "run alone"];
    let curves: Vec<Curve> = (0..6)
        .map(|k| Curve {
            name: names[k].into(),
            colour: colours[k],
            dashed: k == 0 || k == run_alone,
            points: angles[k].clone(),
        })
        .collect();
    let (w, h) = (1100, 560);
    let title = format!("The left hip from walk to run at 0.5 s, transitions of {} s", args.duration);
    let pixels = draw_curves(&title, "time, s", "hip swing, degrees", &curves, w, h)?;
    wgpu_anim::image::save_png(&args.out, w, h, &pixels)?;
    eprintln!("wrote {}", args.out.display());
    Ok(())
}
