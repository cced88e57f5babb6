-- Nothing to revert: readers accept both forms.
SELECT 1;
