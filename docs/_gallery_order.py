"""Order of the gallery examples: the overview first, then one per method, then the topics."""

ORDER = [
    "plot_quickstart.py",
    "plot_optimized_preprocessing.py",
    "plot_maxent.py",
    "plot_fair_classifier.py",
    "plot_fair_regression.py",
    "plot_threshold_debiasing.py",
    "plot_multiclass_debiasing.py",
    "plot_fair_logloss.py",
    "plot_balanced_filtering.py",
    "plot_fair_selection.py",
    "plot_fair_ranking.py",
    "plot_fair_workload.py",
    "plot_solvers.py",
    "plot_price_of_fairness.py",
    "plot_embedding.py",
    "plot_sweep_frontier.py",
    "plot_certified_frontier.py",
    "plot_infeasible.py",
]


class ExampleOrder:
    """sphinx-gallery sort key: listed examples in ``ORDER``, any new one after them by name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        return (ORDER.index(filename) if filename in ORDER else len(ORDER), filename)
