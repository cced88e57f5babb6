//! Tiers, places, people and the modelled compositions of a household.

use serde::{Deserialize, Serialize};

/// The four household tiers, in the specification's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Tier {
    /// Employee only.
    EmployeeOnly,
    /// Employee and spouse or domestic partner.
    EmployeeSpouse,
    /// Employee and children.
    EmployeeChildren,
    /// Employee, spouse and children.
    Family,
}

impl Tier {
    /// All tiers in order.
    pub const ALL: [Self; 4] = [
        Self::EmployeeOnly,
        Self::EmployeeSpouse,
        Self::EmployeeChildren,
        Self::Family,
    ];

    /// Index 0..4.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Self::EmployeeOnly => 0,
            Self::EmployeeSpouse => 1,
            Self::EmployeeChildren => 2,
            Self::Family => 3,
        }
    }

    /// camelCase wire label.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::EmployeeOnly => "employeeOnly",
            Self::EmployeeSpouse => "employeeSpouse",
            Self::EmployeeChildren => "employeeChildren",
            Self::Family => "family",
        }
    }

    pub(crate) fn from_parts(partner: bool, children: bool) -> Self {
        match (partner, children) {
            (false, false) => Self::EmployeeOnly,
            (true, false) => Self::EmployeeSpouse,
            (false, true) => Self::EmployeeChildren,
            (true, true) => Self::Family,
        }
    }
}

/// A person's place in a household; part of the stream key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Place {
    /// The employee (`e`).
    Employee,
    /// The spouse or domestic partner (`s`).
    Spouse,
    /// Another dependent, by age descending then input order (`c1`, `c2`, …).
    Child(u8),
    /// The modelled spouse of an unknown household (`ms`).
    ModelledSpouse,
    /// A modelled child of an unknown household (`mc1`, `mc2`).
    ModelledChild(u8),
}

impl Place {
    /// The label used in the stream key.
    #[must_use]
    pub fn label(self) -> String {
        match self {
            Self::Employee => "e".to_owned(),
            Self::Spouse => "s".to_owned(),
            Self::Child(n) => format!("c{n}"),
            Self::ModelledSpouse => "ms".to_owned(),
            Self::ModelledChild(n) => format!("mc{n}"),
        }
    }
}

/// A rated person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Person {
    /// Whole years at the plan-year start.
    pub age: u32,
    /// Place in the household.
    pub place: Place,
    /// Whether the person is charged a premium (the ACA rule charges only
    /// the three oldest children under 21).
    pub charged: bool,
}

/// Most people in one household: the employee and six dependents.
pub const MAX_PEOPLE: usize = 1 + crate::census::MAX_DEPENDENTS;

/// The people of a known household, stored inline (no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct People {
    len: u8,
    items: [Person; MAX_PEOPLE],
}

impl People {
    pub(crate) fn new(employee: Person) -> Self {
        Self {
            len: 1,
            items: [employee; MAX_PEOPLE],
        }
    }

    /// Adds a person; a validated census never exceeds [`MAX_PEOPLE`].
    pub(crate) fn push(&mut self, p: Person) {
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = p;
            self.len += 1;
        }
    }

    /// Every slot, and how many hold people (the rest hold copies of
    /// earlier people): for sums that mask rather than branch.
    pub(crate) fn slots(&self) -> (&[Person; MAX_PEOPLE], usize) {
        (&self.items, usize::from(self.len))
    }

    /// The people as a slice, employee first.
    #[must_use]
    pub fn as_slice(&self) -> &[Person] {
        self.items.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl std::ops::Deref for People {
    type Target = [Person];

    fn deref(&self) -> &[Person] {
        self.as_slice()
    }
}

impl Serialize for People {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

/// The six modelled compositions of an unknown household, in the fixed
/// order the engine sums them: EO, ES, EC with 1 child, EC with 2, family
/// with 1 child, family with 2.
pub const COMPOSITIONS: [(Tier, usize); 6] = [
    (Tier::EmployeeOnly, 0),
    (Tier::EmployeeSpouse, 0),
    (Tier::EmployeeChildren, 1),
    (Tier::EmployeeChildren, 2),
    (Tier::Family, 1),
    (Tier::Family, 2),
];
