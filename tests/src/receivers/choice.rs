//! Branch points and the tape of choices made at them: the schedule of one run.

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng};

/// A kind of branch point, where a run's schedule chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Point {
    /// A delivery attempt: to which receiver, answered or its answer lost (the service times out),
    /// or refused.
    Delivery,
    /// A run of the handler: its duration, whether it fails, whether its receiver dies before or after
    /// its effect, is cut off from the store, or restarts the store.
    Run,
    /// One exchange of a receiver with a simulated Redis: answered, its reply lost, timed out, or a
    /// failover or a restart just before it.
    Op,
}

impl Point {
    /// Every kind.
    pub const ALL: [Point; 3] = [Point::Delivery, Point::Run, Point::Op];

    fn index(self) -> usize {
        match self {
            Point::Delivery => 0,
            Point::Run => 1,
            Point::Op => 2,
        }
    }

    /// Its letter in printed schedules.
    pub fn letter(self) -> char {
        match self {
            Point::Delivery => 'd',
            Point::Run => 'r',
            Point::Op => 'o',
        }
    }

    /// The point whose letter (in printed schedules) is `letter`.
    pub fn of_letter(letter: &str) -> Option<Point> {
        Point::ALL
            .into_iter()
            .find(|p| p.letter().to_string() == letter)
    }
}

/// How likely a random schedule takes the first (undisturbed) choice at each kind of point.
const RANDOM_DEFAULT: [f64; 3] = [0.45, 0.4, 0.85];

/// The choices of one run: a script for the first branch points, then the first choice (or a random
/// draw) at every later one; and, once run, every choice made.
#[derive(Debug, Default)]
pub struct Tape {
    script: Vec<u8>,
    /// How many points of each kind branch; the later ones take the first choice.
    limits: [usize; 3],
    taken: [usize; 3],
    random: Option<StdRng>,
    /// Every choice: its point, the choice, and whether the point branched.
    pub choices: Vec<(Point, u8, bool)>,
}

impl Tape {
    /// A tape that plays `script` at the branch points allowed by `limits` (per [`Point`], in the
    /// order of [`Point::ALL`]), then the first choice, or with `seed` a random one.
    pub fn new(script: Vec<u8>, limits: [usize; 3], seed: Option<u64>) -> Tape {
        Tape {
            script,
            limits,
            random: seed.map(StdRng::seed_from_u64),
            ..Tape::default()
        }
    }

    /// Chooses among `arity` choices at a point of kind `point`.
    pub fn choose(&mut self, point: Point, arity: usize) -> u8 {
        let at = point.index();
        self.taken[at] += 1;
        if self.taken[at] > self.limits[at] || arity <= 1 {
            self.choices.push((point, 0, false));
            return 0;
        }
        let branch = self.branch_points();
        let choice = match (self.script.get(branch), &mut self.random) {
            (Some(scripted), _) => (*scripted).min(u8::try_from(arity - 1).unwrap_or(u8::MAX)),
            (None, Some(rng)) => {
                if rng.random_bool(RANDOM_DEFAULT[at]) {
                    0
                } else {
                    u8::try_from(rng.random_range(1..arity)).unwrap_or(0)
                }
            }
            (None, None) => 0,
        };
        self.choices.push((point, choice, true));
        choice
    }

    /// How many points branched.
    pub fn branch_points(&self) -> usize {
        self.choices.iter().filter(|(_, _, branch)| *branch).count()
    }
}
