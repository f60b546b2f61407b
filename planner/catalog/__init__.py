"""The vendor catalogs: one row type per kind (rows.py), reading CSV/XLSX tables (read.py), loading and
merging them with every problem named by file, row and column (load.py), and which parts connect (connectors.py).
"""
