"""What is bought and how it is put together: a system's topology (node, scale-up domain, host, rack), PCIe,
the layout of racks and rows, fabric sizing, the other networks, the candidate designs, every quantity at N
nodes, the price and power of a configuration, and the bill of materials.
"""
