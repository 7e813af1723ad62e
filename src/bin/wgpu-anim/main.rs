//! `wgpu-anim`: inspect, sample and render glTF animation files, and time animation frames.

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wgpu_anim::bench::{PathKind, Workload};
use wgpu_anim::gpu::CharacterThreads;
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::offline::gltf_import::{self, ClipSource, Imported};

/// `print!` that ends the program quietly when stdout is a closed pipe (`wgpu-anim inspect f |
/// head`), as a command-line tool does, instead of panicking; another write error is returned.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!($($arg)*))?
    };
}

/// `println!` with [`out!`]'s handling of a closed pipe.
macro_rules! outln {
    () => {
        out!("\n")
    };
    ($($arg:tt)*) => {
        out!("{}\n", format_args!($($arg)*))
    };
}

/// Writes to stdout; exits with success when the reader has gone (a broken pipe).
fn write_stdout(args: std::fmt::Arguments) -> Result<(), String> {
    use std::io::Write;
    match std::io::stdout().lock().write_fmt(args) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

mod bench;
mod compress;
mod cost;
mod inspect;
mod render;
mod retarget;
mod sample;
mod simulate;
mod time_sampling;
mod vat;

/// wgpu-anim — GPU skeletal animation for crowds of skinned characters.
#[derive(Parser)]
#[command(
    name = "wgpu-anim",
    version,
    arg_required_else_help = false,
    after_help = "FILE is a .gltf (with its .bin files) or .glb file. Errors print one line and exit with status 1."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Skeleton tree, clips (duration, channels, interpolation, keys), meshes (vertices,
    /// triangles, influences), morph targets and import notes.
    Inspect {
        /// The glTF file (.gltf with its .bin files, or .glb).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Evaluates a clip at a time: the joints' world matrices, the skinning matrices and the
    /// skinned vertices of mesh 0, primitive 0.
    ///
    /// The clip is an animation of the file, by index or name; the time is clamped to its first
    /// and last key, no looping. Without --cpu or --reference the GPU evaluates the pose (any wgpu
    /// adapter; a software Vulkan driver such as lavapipe works).
    Sample(SampleArgs),
    /// Draws a clip at a time to a PNG, without a window.
    ///
    /// The model's meshes are skinned on the GPU, standing on a ground plane, seen from slightly
    /// above and in front (+Z), the camera framed on the posed model.
    Render(RenderArgs),
    /// Times one animation frame of crowds of built-in mannequins, GPU and CPU.
    ///
    /// For each workload (single-clip: one clip each; locomotion-2d: the 2D locomotion blend space,
    /// a quarter of the crowd mid-cross-fade; layered: that plus a masked override, a local and a
    /// mesh-space additive layer; state-machine: single-clip's clips played by a locomotion state
    /// machine decided on the GPU, a tenth of the crowd's parameters changed every frame;
    /// retarget: single-clip on a long-legged mannequin retargeted on the GPU) and
    /// character count, on each path: gpu-fused (the GPU, two
    /// dispatches, the pose in workgroup memory; where the device allows it), gpu-staged (the GPU,
    /// four dispatches; per-pass times from timestamp queries when the adapter has them), cpu-1
    /// (the CPU mirror on one thread) and cpu-all (the CPU mirror on every core). Medians over
    /// --frames frames after 3 warm-up frames; progress on stderr, a Markdown table on stdout. A
    /// count the device cannot hold is skipped with a note. Bytes per joint are counted from the
    /// buffer layouts: per-character data, and shared library data (cached on a GPU). With both
    /// clip formats and gpu-staged, a second table times the sample pass of raw and compressed
    /// clips in alternate frames (a slow spell of a shared machine falls on both); with
    /// gpu-fused and gpu-staged, another times the two paths on one crowd in alternate frames.
    /// Those and the skinning, morph and transition tables run at the smallest count unless
    /// --extras-at-every-count. Every table checks its figures against a second clock and the
    /// rows, and marks a row that fails as FAILED with the reason. On a CPU adapter the GPU paths
    /// run twice: a thread per character (its default, which no GPU runs) and a SIMD group per
    /// character. --quick: minutes on a software adapter; --report DIR: a dated results file.
    Bench(BenchArgs),
    /// Counts each pass's instructions per joint-sample with callgrind, GPU and CPU mirror.
    ///
    /// A figure that does not drift: timings on a shared machine move by ±15 % from run to run,
    /// instruction counts do not, so two builds compare exactly. For each workload and clip
    /// format the command runs itself under `valgrind --tool=callgrind` (minutes per run): a crowd
    /// of built-in mannequins plays three frames, then each GPU pass runs alone --repeats times
    /// (recorded, submitted and waited for; on a software adapter such as lavapipe this counts the
    /// shader's execution too), then each stage of the CPU mirror on one thread. Only these
    /// sections are counted, every thread's instructions. Progress on stderr, a Markdown table on
    /// stdout. Needs valgrind (Debian: `apt-get install valgrind`).
    ///
    /// With --encode, counts instead the CPU's encode of one culled frame of the crowd-view field
    /// (prepare, encode, submit; the calling thread's instructions only) at each of
    /// --view-characters, staged and fused: whether it stays flat as the crowd grows.
    Cost(CostArgs),
    /// Compresses a file's clips and reports size and accuracy per clip.
    ///
    /// Constant and rest-pose tracks are stripped; the others are sampled uniformly, range-reduced
    /// per clip and per segment of 16 frames, and quantized with per-segment bit widths chosen so
    /// that no virtual point on a shell around any joint moves more than the threshold, in object
    /// space (ACL's error metric). Tracks the format cannot hold stay raw and are listed. Errors
    /// are measured in f64 at every frame and half-way between frames. A table on stdout (or JSON
    /// with --json), progress on stderr; --out writes the compressed clips for
    /// `sample --compressed` and `render --compressed`.
    Compress(CompressArgs),
    /// Bakes a character's clips into a vertex animation texture, the far LOD of a crowd.
    ///
    /// The mesh (a file's meshes bound to its skeleton, merged; without FILE the built-in
    /// mannequin) is skinned by the CPU mirror at --fps frames per second over each clip; each
    /// vertex's position is quantized to 16 bits per axis in the box of every frame and its normal
    /// octahedron-encoded in 16 bits: 8 bytes per vertex and frame. The error against skinning is
    /// measured at every frame and between frames. Progress on stderr, a table and the error on
    /// stdout; --out writes the VAT (read with `wgpu_anim::vat::Vat::from_bytes`).
    BakeVat(BakeVatArgs),
    /// Times the CPU's sampling of a file's clips: the mirror's sample stage and `ClipSampler`.
    ///
    /// A crowd plays each clip, every character at its own phase and rate, stepped at 60 frames
    /// per second and looping; each frame every character's joints are sampled by the CPU
    /// mirror's `sample` stage (a blend list of the one clip), then by a `ClipSampler` per
    /// character (which keeps each track's key pair between frames), on one thread. Reports
    /// nanoseconds per joint-sample (the median frame's time over characters × joints), the work
    /// ozz-animation's SamplingJob does, and the largest difference between the two paths.
    TimeSampling(TimeSamplingArgs),
    /// Runs a state machine over a script and prints what every character's machine did.
    ///
    /// MACHINE is a state machine's JSON file; its clips come from --library (a glTF file's first
    /// skeleton; without it the built-in mannequin's clips and its "locomotion" blend space, whose
    /// parameters are the velocity's x and z) plus any --clip. The script (JSON: dt, frames,
    /// characters, and per frame and character the parameters to set) runs at its fixed dt. Per
    /// frame and character it prints the state playing (a running transition's source), its
    /// normalized time, the transition running (index, source, destination, weight) and the
    /// frame's events. --cpu runs the CPU mirror of the rules; without it the GPU's clock pass
    /// runs them.
    Simulate(SimulateArgs),
    /// Plays every clip of one character on another and writes the other with them as .glb.
    ///
    /// SOURCE and --to are glTF files (their first skeleton, its skinned meshes and clips) or
    /// `mannequin`, the built-in one. The bone map is the humanoid profile (the usual names of
    /// Mixamo, the CMU takes and the mannequin), or with --by-name every joint whose name both
    /// have; --map applies a JSON file over it ({"target joint": "source joint" or null}). The
    /// retarget root's position is scaled by the ratio of the two hip heights.
    Retarget(RetargetArgs),
}

/// `wgpu-anim retarget`'s arguments.
#[derive(Args)]
struct RetargetArgs {
    /// The character whose clips play: a glTF file, or `mannequin`.
    #[arg(value_name = "SOURCE")]
    source: PathBuf,
    /// The character that plays them: a glTF file, or `mannequin`.
    #[arg(long, value_name = "TARGET")]
    to: PathBuf,
    /// A JSON bone map applied over the profile's: {"target joint": "source joint" or null}.
    #[arg(long, value_name = "MAP.json")]
    map: Option<PathBuf>,
    /// Map joints by equal names instead of the humanoid profile.
    #[arg(long)]
    by_name: bool,
    /// Stand both characters in their skins' bind poses rather than their nodes' rest (for files
    /// whose nodes hold a pose).
    #[arg(long)]
    bind_rest: bool,
    /// Foot goals: each foot of the target (by the humanoid profile) moved after its source
    /// foot by the two-bone IK, so that planted feet stay planted.
    #[arg(long)]
    feet: bool,
    /// The .glb to write: the target's skeleton and meshes with the retargeted clips.
    #[arg(long, value_name = "OUT.glb")]
    out: PathBuf,
}

/// `wgpu-anim simulate`'s arguments.
#[derive(Args)]
struct SimulateArgs {
    /// The state machine (JSON).
    #[arg(value_name = "MACHINE")]
    machine: PathBuf,
    /// The script (JSON: {"dt", "frames", "characters", "events": [{"frame", "character",
    /// "set": {name: value}, "reset"}]}).
    #[arg(long, value_name = "SCRIPT")]
    script: PathBuf,
    /// The clips: a glTF file (.gltf or .glb) whose first skeleton the machine animates
    /// [default: the built-in mannequin].
    #[arg(long, value_name = "FILE")]
    library: Option<PathBuf>,
    /// A clip of the rest pose, NAME=SECONDS long, added to the library (repeatable): a state
    /// whose motion only needs a length.
    #[arg(long = "clip", value_name = "NAME=SECONDS")]
    clips: Vec<String>,
    /// Run the CPU mirror of the rules instead of the GPU.
    #[arg(long)]
    cpu: bool,
    /// Print JSON: an array of frames, each `{"frame", "characters": [{"character", "state",
    /// "time", "transition", "events"}]}`; else one line per frame and character.
    #[arg(long)]
    json: bool,
}

/// `wgpu-anim time-sampling`'s arguments.
#[derive(Args)]
struct TimeSamplingArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Only this clip: an animation index in the file, or its name [default: every clip].
    #[arg(long, value_name = "N")]
    clip: Option<String>,
    /// Characters playing each clip.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = parse_count)]
    characters: u32,
    /// Measured frames (medians are reported), after 3 warm-up frames.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = parse_count)]
    frames: u32,
    /// Scales every character's playback rate: 1 plays the clip, 25 seeks far at every frame.
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = positive_f64)]
    rate: f64,
    /// Sample compressed clips: those of FILE.wgac (written by `compress --out`), or, without a
    /// file, the file's clips compressed with the default settings.
    #[arg(long, value_name = "FILE.wgac", num_args = 0..=1, default_missing_value = "")]
    compressed: Option<String>,
    /// Sample the file's clips with the keys removed that their interpolation reproduces within
    /// M metres (1 mm without a value; rotations and scales measured 10 cm from the joint), as
    /// ozz-animation's importer does by default.
    #[arg(long, value_name = "M", num_args = 0..=1, default_missing_value = "0.001", conflicts_with = "compressed", value_parser = non_negative_f64)]
    reduce_keys: Option<f64>,
}

/// `wgpu-anim bake-vat`'s arguments.
#[derive(Args)]
struct BakeVatArgs {
    /// The glTF file (.gltf with its .bin files, or .glb) [default: the built-in mannequin].
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Only this clip: an animation index or name in the file, a clip name of the mannequin
    /// [default: every clip].
    #[arg(long, value_name = "N")]
    clip: Option<String>,
    /// Frames per second.
    #[arg(long, value_name = "HZ", default_value_t = 30.0, value_parser = positive_f64)]
    fps: f64,
    /// Write the VAT to this file.
    #[arg(long, value_name = "FILE.vat")]
    out: Option<PathBuf>,
}

/// `wgpu-anim compress`'s arguments.
#[derive(Args)]
struct CompressArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Only this clip: an animation index in the file, or its name [default: every clip].
    #[arg(long, value_name = "N")]
    clip: Option<String>,
    /// Largest error, centimetres.
    #[arg(long, value_name = "CM", default_value_t = 0.01, value_parser = positive_f64)]
    threshold: f64,
    /// Radius of the shell of virtual points around each joint, centimetres.
    #[arg(long, value_name = "CM", default_value_t = 3.0, value_parser = positive_f64)]
    shell: f64,
    /// Largest error of an element of a joint's object-space rotation matrix, or of its product
    /// with a rotation such as a skin's inverse bind matrix (0: none, the shell metric alone, as
    /// ACL).
    #[arg(long, value_name = "R", default_value_t = 9e-5, value_parser = non_negative_f64)]
    rotation_tolerance: f64,
    /// Largest error of a skin matrix's translation, as a fraction of the skeleton's size (0:
    /// none).
    #[arg(long, value_name = "F", default_value_t = 1e-4, value_parser = non_negative_f64)]
    skin_tolerance: f64,
    /// Centimetres per file unit: 100 for glTF's metres, 5.6444 for the CMU takes.
    #[arg(long, value_name = "CM", default_value_t = 100.0, value_parser = positive_f64)]
    unit_cm: f64,
    /// Frames per segment, a power of two (ACL's default is about 16) [default: 16 and 32,
    /// the smaller result kept, clip by clip].
    #[arg(long, value_name = "N", value_parser = parse_count)]
    segment_frames: Option<u32>,
    /// Resample every clip to this many frames per second first (the raw clip the errors are
    /// measured against is then the resampled one) [default: the clip's own key rate].
    #[arg(long, value_name = "HZ", value_parser = positive_f64)]
    rate: Option<f64>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write the compressed clips to this file (read by `--compressed FILE`).
    #[arg(long, value_name = "FILE.wgac")]
    out: Option<PathBuf>,
}

/// `wgpu-anim sample`'s arguments.
#[derive(Args)]
struct SampleArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The clip: an animation index in the file, or its name.
    #[arg(long, value_name = "N")]
    clip: String,
    /// Time in seconds, clamped to the clip's first and last key (no looping).
    #[arg(long, value_name = "T", value_parser = finite_f64, allow_negative_numbers = true)]
    time: f64,
    /// Evaluate with the CPU mirror of the GPU stages (f32).
    #[arg(long, conflicts_with = "reference")]
    cpu: bool,
    /// Evaluate with the f64 reference implementation.
    #[arg(long)]
    reference: bool,
    /// Evaluate through compressed clips: those of FILE.wgac (written by `compress --out`), or,
    /// without a file, the file's clips compressed with the default settings.
    #[arg(long, value_name = "FILE.wgac", num_args = 0..=1, default_missing_value = "")]
    compressed: Option<String>,
    /// Print JSON with the fields and conventions of the conformance fixtures (matrices are 16
    /// floats, column-major; joints in skin order when skinned, else every node in node order).
    #[arg(long)]
    json: bool,
}

/// Most instances `render --count` draws.
const MAX_RENDER_COUNT: u32 = 10_000;
/// Largest side of a `render --size` picture, pixels.
const MAX_RENDER_SIDE: u32 = 16_384;

/// `wgpu-anim render`'s arguments.
#[derive(Args)]
struct RenderArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The clip: an animation index in the file, or its name.
    #[arg(long, value_name = "N", default_value = "0")]
    clip: String,
    /// Time in seconds.
    #[arg(long, value_name = "T", default_value_t = 0.0, value_parser = finite_f32, allow_negative_numbers = true)]
    time: f32,
    /// Draw K instances on a grid, their times spread over the clip so that they differ.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RENDER_COUNT)))]
    count: u32,
    /// Image size in pixels.
    #[arg(long, value_name = "WxH", default_value = "800x600", value_parser = parse_size)]
    size: Size,
    /// Where to write the picture.
    #[arg(long, value_name = "IMAGE.png")]
    out: PathBuf,
    /// Leave out the ground plane.
    #[arg(long)]
    no_ground: bool,
    /// Draw through compressed clips: those of FILE.wgac (written by `compress --out`), or,
    /// without a file, the file's clips compressed with the default settings.
    #[arg(long, value_name = "FILE.wgac", num_args = 0..=1, default_missing_value = "")]
    compressed: Option<String>,
}

/// `wgpu-anim bench`'s arguments.
#[derive(Args)]
struct BenchArgs {
    /// Crowd sizes, comma-separated [default: 1000,4000,16000,64000; with --quick 1000,8000;
    /// with --report 1000,4000,16000,64000,128000].
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_count)]
    characters: Option<Vec<u32>>,
    /// Measured frames per configuration (medians are reported) [default: 30; with --quick 5].
    #[arg(long, value_name = "N", value_parser = positive::<u32>)]
    frames: Option<u32>,
    /// Workloads, comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_workload, default_value = "single-clip,single-clip-random,locomotion-2d,layered,morph,ik,state-machine,retarget")]
    workloads: Vec<Workload>,
    /// Paths, comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_path, default_value = "gpu-fused,gpu-staged,cpu-1,cpu-all")]
    paths: Vec<PathKind>,
    /// How the mannequin's library stores its clips, comma-separated: a set of rows for each.
    #[arg(long, value_name = "raw,compressed", value_delimiter = ',', value_parser = parse_clip_format, default_value = "raw,compressed")]
    clip_format: Vec<ClipFormat>,
    /// Threads of cpu-all [default: every core].
    #[arg(long, value_name = "N", value_parser = positive::<usize>)]
    threads: Option<usize>,
    /// Threads per character on the GPU paths, comma-separated: one (a thread per character),
    /// narrow (a SIMD group), wide (a workgroup of 64), auto [default: one,narrow on a CPU
    /// adapter, auto on a GPU].
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_character_threads)]
    character_threads: Vec<CharacterThreads>,
    /// Run the paired tables (formats, paths, skinning, morph, transitions) at every count, not
    /// only the smallest.
    #[arg(long)]
    extras_at_every_count: bool,
    /// Skip the comparison of linear and dual-quaternion skinning (animated and drawn, in
    /// alternate frames).
    #[arg(long)]
    no_skinning: bool,
    /// Skip the comparison of a crowd with and without morph targets (animated and drawn, in
    /// alternate frames).
    #[arg(long)]
    no_morph: bool,
    /// Skip the comparison of cross-fades and inertialized transitions (the sample pass, a
    /// quarter of the crowd transitioning).
    #[arg(long)]
    no_transitions: bool,
    /// Sizes of the crowd-view workload: a camera that sees a tenth of the field, the frame
    /// culled against every character evaluated (and a tenth as many, all evaluated), at most 10
    /// frames each; `--view-characters 0` skips it [default: 1000,16000,128000].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    view_characters: Option<Vec<u32>>,
    /// A run that finishes in minutes on a software adapter and still fills every table: 1,000
    /// and 8,000 characters, 5 frames (explicit --characters, --frames, --view-characters win).
    #[arg(long)]
    quick: bool,
    /// Write a dated results file to DIR (the tables with their checks, device, driver, commit
    /// and command), the whole report as JSON and the plot beside it. Without --quick, the full
    /// matrix a GPU owner wants: 1,000 to 128,000 characters, every table at every count.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Write the rows as a JSON array to PATH.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write a log-log PNG chart of frame time against characters to PATH.
    #[arg(long, value_name = "PATH.png")]
    plot: Option<PathBuf>,
}

/// `wgpu-anim cost`'s arguments.
#[derive(Args)]
struct CostArgs {
    /// Characters in the crowd.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = parse_count)]
    characters: u32,
    /// Workloads, comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_workload, default_value = "single-clip,single-clip-random,locomotion-2d,layered")]
    workloads: Vec<Workload>,
    /// How the mannequin's library stores its clips, comma-separated: a run for each.
    #[arg(long, value_name = "raw,compressed", value_delimiter = ',', value_parser = parse_clip_format, default_value = "raw,compressed")]
    clip_format: Vec<ClipFormat>,
    /// Times each pass runs in its section (the count is divided by it).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = positive::<u32>)]
    repeats: u32,
    /// The valgrind program.
    #[arg(long, value_name = "PATH", default_value = "valgrind")]
    valgrind: PathBuf,
    /// Write the rows as a JSON array to PATH.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Compare with another build's run: the rows of its --json, read before counting; the table
    /// then gives both counts per joint-sample and this run's ÷ the baseline's.
    #[arg(long, value_name = "PATH.json")]
    baseline: Option<PathBuf>,
    /// Count the CPU's encode of a culled crowd-view frame instead of the passes (--workloads,
    /// --clip-format, --characters and --repeats do not apply).
    #[arg(long)]
    encode: bool,
    /// Count the `sample` pass of the bench's transitions comparison instead of the passes: a
    /// crowd of --characters with none, a quarter cross-fading and a quarter inertializing
    /// (--workloads, --clip-format and --repeats do not apply).
    #[arg(long, conflicts_with = "encode")]
    transitions: bool,
    /// With --encode: the crowd-view field's sizes, comma-separated.
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_count, default_value = "1000,16000,128000")]
    view_characters: Vec<u32>,
    /// Count the GPU passes also on the crowd run with these threads per character,
    /// comma-separated (one, narrow, wide), sections `gpu <stage>, <threads>` [default: narrow on
    /// a CPU adapter, whose own default is one: a SIMD group per character is nearer to what a
    /// GPU runs; none on a GPU].
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_character_threads)]
    character_threads: Option<Vec<CharacterThreads>>,
    /// Run the sections of one workload and clip format in this process and print them as JSON
    /// (what the command runs under valgrind).
    #[arg(long, hide = true)]
    inner: bool,
}

/// A picture's size in pixels.
#[derive(Clone, Copy, Debug)]
struct Size {
    width: u32,
    height: u32,
}

fn non_negative_f64(v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("'{v}' is not a finite number at least 0"))
}

fn positive_f64(v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("'{v}' is not a finite positive number"))
}

fn finite_f64(v: &str) -> Result<f64, String> {
    let t: f64 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("'{v}' is not finite"))
    }
}

fn finite_f32(v: &str) -> Result<f32, String> {
    let t: f32 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("'{v}' is not finite"))
    }
}

fn parse_size(v: &str) -> Result<Size, String> {
    v.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
        .filter(|&(w, h)| (1..=MAX_RENDER_SIDE).contains(&w) && (1..=MAX_RENDER_SIDE).contains(&h))
        .map(|(width, height)| Size { width, height })
        .ok_or_else(|| format!("'{v}' is not WxH with sides from 1 to {MAX_RENDER_SIDE} pixels"))
}

fn parse_count(v: &str) -> Result<u32, String> {
    v.trim()
        .replace('_', "")
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("'{v}' is not a positive whole number"))
}

fn parse_workload(v: &str) -> Result<Workload, String> {
    Workload::from_name(v.trim()).ok_or_else(|| {
        let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
        format!("'{v}' is not a workload ({})", names.join(", "))
    })
}

fn parse_clip_format(v: &str) -> Result<ClipFormat, String> {
    ClipFormat::from_name(v.trim()).ok_or_else(|| format!("'{v}' is not a clip format (raw, compressed)"))
}

fn parse_character_threads(v: &str) -> Result<CharacterThreads, String> {
    CharacterThreads::from_name(v.trim())
        .ok_or_else(|| format!("'{v}' is not a number of threads per character (one, narrow, wide, auto)"))
}

fn parse_path(v: &str) -> Result<PathKind, String> {
    PathKind::ALL.into_iter().find(|p| p.name() == v.trim()).ok_or_else(|| {
        let names: Vec<_> = PathKind::ALL.iter().map(|p| p.name()).collect();
        format!("'{v}' is not a path ({})", names.join(", "))
    })
}

/// A whole number above zero.
fn positive<T: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<T, String> {
    v.trim()
        .parse::<T>()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("'{v}' is not a positive whole number"))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return match e.print() {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(1),
            };
        }
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            return ExitCode::from(1);
        }
    };
    let result = match cli.command {
        Command::Inspect { file } => inspect::inspect(&file),
        Command::Sample(a) => sample::sample(&a),
        Command::Render(a) => render::render(&a),
        Command::Bench(a) => bench::run_bench(&a),
        Command::Cost(a) => cost::cost(&a),
        Command::Compress(a) => compress::compress(&a),
        Command::BakeVat(a) => vat::bake(&a),
        Command::TimeSampling(a) => time_sampling::time(&a),
        Command::Simulate(a) => simulate::simulate(&a),
        Command::Retarget(a) => retarget::retarget(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = e.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("error: {line}");
            ExitCode::from(1)
        }
    }
}

/// A command-line error on one line: clap's message and tip, then the usage it printed.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut message = Vec::new();
    let mut usage = None;
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(u) = paragraph.strip_prefix("Usage:") {
            usage = Some(flat(u));
        } else if !paragraph.starts_with("For more information") {
            message.push(flat(paragraph.strip_prefix("error:").unwrap_or(paragraph)));
        }
    }
    let mut line = message.join("; ");
    if let Some(u) = usage {
        line.push_str(&format!("; usage: {u}"));
    }
    // Point at the subcommand's help when one was named (the tool itself takes no option
    // before it but -h and -V).
    let command = Cli::command();
    let first = std::env::args_os()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    let sub = first.and_then(|a| {
        command
            .get_subcommands()
            .map(clap::Command::get_name)
            .find(|name| a.to_str() == Some(*name))
    });
    match sub {
        Some(sub) => line.push_str(&format!("; run `wgpu-anim {sub} --help` for help")),
        None => line.push_str("; run `wgpu-anim --help` for help"),
    }
    line
}

fn load(file: &Path) -> Result<Imported, String> {
    gltf_import::load(file).map_err(|e| e.to_string())
}

/// Where `--compressed` takes clips from: none given, raw; an empty path, the file's clips
/// compressed with the defaults; else a compressed library file.
fn clip_source(compressed: Option<&str>) -> Result<ClipSource, String> {
    Ok(match compressed {
        None => ClipSource::Raw,
        Some("") => ClipSource::Compress(wgpu_anim::offline::compress::CompressionSettings::default()),
        Some(p) => {
            ClipSource::File(wgpu_anim::offline::compressed_file::read(Path::new(p)).map_err(|e| e.to_string())?)
        }
    })
}

/// The clips of the file's first skeleton a command works on: the one `clip` names (an animation
/// index or name), or every clip; with the skeleton's index. `doing` names the work for the error
/// of a file with no clip ("no clip to {doing}").
fn chosen_clips(imp: &Imported, file: &str, clip: Option<&str>, doing: &str) -> Result<(usize, Vec<usize>), String> {
    let s = imp
        .primary_skeleton()
        .ok_or_else(|| format!("{file}: nothing to animate (no nodes)"))?;
    let sk = &imp.skeletons[s];
    let chosen: Vec<usize> = match clip {
        Some(c) => {
            let animation = find_animation(imp, file, c)?;
            vec![
                sk.clip_of_animation(animation)
                    .ok_or_else(|| format!("{file}: animation {animation} does not animate the first skeleton"))?,
            ]
        }
        None => (0..sk.clips.len()).collect(),
    };
    if chosen.is_empty() {
        return Err(format!("{file}: no clip to {doing}"));
    }
    Ok((s, chosen))
}

/// The animation `clip` names: an index in the file's animations, or a name.
fn find_animation(imp: &Imported, file: &str, clip: &str) -> Result<usize, String> {
    let animation = match clip.parse::<usize>() {
        Ok(n) => n,
        Err(_) => imp
            .animations
            .iter()
            .position(|x| x.name == clip)
            .ok_or_else(|| format!("{file}: no animation called '{clip}'"))?,
    };
    if animation >= imp.animations.len() {
        return Err(format!(
            "{file}: clip {animation} does not exist (the file has {} animations)",
            imp.animations.len()
        ));
    }
    Ok(animation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu_anim::bench::Config;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_defaults_are_the_library_defaults() {
        let Command::Bench(a) = Cli::parse_from(["wgpu-anim", "bench"]).command else {
            panic!("bench parses as bench");
        };
        let d = Config::default();
        let c = bench::config_of(&a);
        assert_eq!(c.counts, d.counts);
        assert_eq!(c.frames, d.frames);
        assert_eq!(c.view_counts, d.view_counts);
        assert_eq!(c.workloads, d.workloads);
        assert_eq!(c.paths, d.paths);
        assert_eq!(c.threads, d.threads);
        assert_eq!(c.character_threads, d.character_threads);
        let Command::Bench(a) = Cli::parse_from(["wgpu-anim", "bench", "--quick", "--frames", "7"]).command else {
            panic!("bench parses as bench");
        };
        let (c, q) = (bench::config_of(&a), Config::quick());
        assert_eq!((c.counts, c.frames, c.view_counts), (q.counts, 7, q.view_counts));
        let Command::Bench(a) = Cli::parse_from(["wgpu-anim", "bench", "--report", "out"]).command else {
            panic!("bench parses as bench");
        };
        let c = bench::config_of(&a);
        assert_eq!(c.counts.last(), Some(&128_000));
        assert!(c.extras_at_every_count);
    }
}
